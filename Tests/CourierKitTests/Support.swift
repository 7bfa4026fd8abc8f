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

/// One request a test server received.
struct ReceivedRequest: Sendable {
    var head: String
    var body: [UInt8]
    /// When the server read the request head.
    var received = ContinuousClock.now
    var requestLine: String { String(head.split(separator: "\r\n", omittingEmptySubsequences: false).first ?? "") }
    var headerLines: [String] { head.split(separator: "\r\n").dropFirst().map(String.init) }
    func header(_ name: String) -> String? {
        for line in headerLines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// What a test server answers.
struct Reply: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: String = "ok"
    var delay: Duration = .zero
}

/// A loopback HTTP/1.1 server (on ScriptedServer) that records each request and answers with `respond` for the
/// n-th request (0-based).
final class TestServer: Sendable {
    private let server: ScriptedServer

    init(respond: @escaping @Sendable (_ index: Int, _ request: ReceivedRequest) -> Reply = { _, _ in Reply(status: 200) }) throws {
        let box = LogBox()
        server = try ScriptedServer { connection in
            while let head = connection.readRequestHead() {
                var request = ReceivedRequest(head: head, body: [])
                let length = Int(request.header("content-length") ?? "0") ?? 0
                guard let body = connection.readBytes(length) else { return }
                request.body = body
                let index = box.append(request)
                let reply = respond(index, request)
                if reply.delay > .zero {
                    Thread.sleep(forTimeInterval: Double(reply.delay.components.seconds) + Double(reply.delay.components.attoseconds) / 1e18)
                }
                var text = "HTTP/1.1 \(reply.status) X\r\nContent-Length: \(reply.body.utf8.count)\r\n"
                for (name, value) in reply.headers { text += "\(name): \(value)\r\n" }
                connection.write(text + "\r\n" + reply.body)
            }
        }
        logBox = box
    }

    private let logBox: LogBox
    private final class LogBox: Sendable {
        let requests = Mutex<[ReceivedRequest]>([])
        func append(_ r: ReceivedRequest) -> Int {
            requests.withLock { list in
                list.append(r)
                return list.count - 1
            }
        }
    }

    var requests: [ReceivedRequest] { logBox.requests.withLock { $0 } }
    var port: Int { server.port }
    func url(_ path: String) -> String { server.url(path) }
    func stop() { server.stop() }
}

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
    DataLoaderService(
        graph: try compile(yaml), userAgent: "courier-tests/1", registry: TestRegistry.registry, environment: [:],
        fallbackCooldown: cooldown
    )
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
/// With `hang: "yes"` it never answers.
enum TestTokenPlugin: AuthoriserPlugin {
    static let descriptor = AuthoriserTypeDescriptor(
        type: "test-token", summary: "test tokens", settings: [.init("hang", .string, "never answer"), .init("header", .headerName, "the header to set")]
    )

    static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        var header = "Authorization"
        if case .string(let value)? = instance.settings["header"], let literal = value.literalValue { header = literal }
        return TestTokenAuthoriser(log: TokenLog.named(instance.name), hang: instance.settings["hang"] != nil, header: header)
    }
}

final class TestTokenAuthoriser: Authoriser {
    let log: TokenLog
    let hang: Bool
    let header: String
    init(log: TokenLog, hang: Bool, header: String) {
        self.log = log
        self.hang = hang
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
