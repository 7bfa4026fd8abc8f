import CourierCore
import CourierKit
import CourierPolicy
import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
import CourierAuthorisers

/// Compiles YAML into a graph, recording the diagnostics as a test failure when it has errors.
func compile(_ yaml: String, registry: AuthoriserRegistry = TestRegistry.registry, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> PolicyGraph {
    let path = NSTemporaryDirectory() + "courier-loader-\(UUID().uuidString).yaml"
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let compilation = PolicyCompiler(registry: registry).compile(file: path)
    if compilation.hasErrors { Issue.record("policy errors: \(compilation.diagnostics)", sourceLocation: sourceLocation) }
    return try #require(compilation.graph, sourceLocation: sourceLocation)
}

func makeService(_ yaml: String, cooldown: Duration = .seconds(30)) throws -> DataLoaderService {
    DataLoaderService(graph: try compile(yaml), configuration: .testing { $0.fallbackCooldown = cooldown })
}

extension DataLoaderService.Configuration {
    /// The tests' configuration: the test registry, no process environment, then `change`.
    static func testing(userAgent: String = "courier-tests/1", _ change: (inout Self) -> Void = { _ in }) -> Self {
        var configuration = Self(userAgent: userAgent)
        configuration.registry = TestRegistry.registry
        configuration.environment = [:]
        change(&configuration)
        return configuration
    }
}

enum TestRegistry {
    static let registry = AuthoriserRegistry.standard.registering(TestTokenPlugin.self)
}

/// Counters a test token authoriser keeps, per instance name.
final class TokenLog: Sendable {
    let generation = Mutex(0)
    let refreshes = Mutex(0)
    let failures = Mutex(0)
    static let all = Mutex<[String: TokenLog]>([:])
    static func named(_ name: String) -> TokenLog {
        all.withLock { table in
            if let log = table[name] { return log }
            let log = TokenLog()
            table[name] = log
            return log
        }
    }
}

/// `plugin: test-token`: sends `Authorization: Bearer t<generation>`; a refresh moves to the next generation.
/// With `hang: "yes"` it never answers; with `hang: "refused"` it answers, but never returns from
/// `authorisationFailed(for:)`.
enum TestTokenPlugin: AuthoriserPlugin {
    static let descriptor = AuthoriserTypeDescriptor(
        type: "test-token", summary: "test tokens", settings: [.init("hang", .string, "never answer"), .init("header", .headerName, "the header to set")]
    )

    static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        var header = "Authorization"
        if case .string(let value)? = instance.settings["header"], let literal = value.literalValue { header = literal }
        var hang = false
        var hangOnRefused = false
        if case .string(let value)? = instance.settings["hang"] {
            if value.literalValue == "refused" { hangOnRefused = true } else { hang = true }
        }
        return TestTokenAuthoriser(log: TokenLog.named(instance.name), hang: hang, hangOnRefused: hangOnRefused, header: header)
    }
}

final class TestTokenAuthoriser: Authoriser {
    let log: TokenLog
    let hang: Bool
    let hangOnRefused: Bool
    let header: String
    init(log: TokenLog, hang: Bool, hangOnRefused: Bool = false, header: String) {
        self.log = log
        self.hang = hang
        self.hangOnRefused = hangOnRefused
        self.header = header
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        if hang {
            // Never answers, not even to cancellation: the loader's timeout must free the caller.
            await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in Hanging.keep(c) }
        }
        let g = log.generation.withLock { $0 }
        request.headers.replaceOrAdd(name: header, value: "Bearer t\(g)")
    }

    func authorisationFailed(for request: AuthorisationRequest) async {
        log.failures.withLock { $0 += 1 }
        if hangOnRefused {
            await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in Hanging.keep(c) }
        }
    }

    func refresh() async throws {
        log.refreshes.withLock { $0 += 1 }
        // Slow enough that concurrent 401s overlap with it.
        try await Task.sleep(for: .milliseconds(100))
        log.generation.withLock { $0 += 1 }
    }
}

enum Hanging {
    static let kept = Mutex<[UnsafeContinuation<Void, Never>]>([])
    static func keep(_ c: UnsafeContinuation<Void, Never>) { kept.withLock { $0.append(c) } }
}

func elapsed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return (ContinuousClock.now - start).seconds
}
