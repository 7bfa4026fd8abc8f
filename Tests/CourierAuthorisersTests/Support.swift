import CourierAuthorisers
import CourierCore
import CourierTestSupport
import CourierTransport
import Foundation
import Synchronization

/// The loader's job in production: an ``AuthoriserHTTPClient`` over Courier's own transport.
struct TransportAuthoriserClient: AuthoriserHTTPClient {
    let client: HTTPClient

    func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        let response = try await client.execute(
            HTTPRequest(method: method, url: url, headers: headers, body: body.map { .bytes($0) } ?? .none, maxRedirects: 0)
        )
        return (response.status, response.headers, response.body)
    }
}

/// A wall clock a test moves by hand.
final class ManualClock: Sendable {
    private let now: Mutex<Double>
    init(_ start: Double = 1_800_000_000) { now = Mutex(start) }
    func advance(by seconds: Double) { now.withLock { $0 += seconds } }
    var read: @Sendable () -> Double { { [self] in now.withLock { $0 } } }
}

func makeInstance(_ plugin: String, _ settings: [String: PolicyValue], name: String = "test-auth") -> AuthoriserInstance {
    AuthoriserInstance(name: name, plugin: plugin, settings: settings, definedAt: SourceLocation(file: "policy.yaml", line: 1, column: 1))
}

func str(_ s: String) -> PolicyValue { .string(PolicyString(literal: s)) }
func env(_ name: String) -> PolicyValue { .string(PolicyString(segments: [.secret(SecretReference(source: .env, name: name))])) }
func file(_ path: String) -> PolicyValue { .string(PolicyString(segments: [.secret(SecretReference(source: .file, name: path))])) }

func makeContext(
    client: HTTPClient,
    environment: [String: String] = [:],
    clock: ManualClock = ManualClock()
) -> AuthoriserContext {
    AuthoriserContext(secrets: .system(environment: environment), httpClient: TransportAuthoriserClient(client: client), clock: clock.read)
}

