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

/// One request a scripted server received.
struct ReceivedRequest: Sendable {
    var head: String
    var body: [UInt8]
    var requestLine: String { String(head.split(separator: "\r\n", omittingEmptySubsequences: false).first ?? "") }
    var headerLines: [String] { head.split(separator: "\r\n").dropFirst().map(String.init) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
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

/// A loopback HTTP/1.1 server that records every request (head and body) and answers with what `respond`
/// returns for the n-th request (0-based): a status and a body (sent as JSON).
final class RecordingServer: Sendable {
    private let server: ScriptedServer
    private final class Log: Sendable {
        let requests = Mutex<[ReceivedRequest]>([])
    }
    private let log = Log()

    init(delay: Duration = .zero, respond: @escaping @Sendable (_ index: Int, _ request: ReceivedRequest) -> (Int, String)) throws {
        let log = self.log
        server = try ScriptedServer { connection in
            while let head = connection.readRequestHead() {
                var request = ReceivedRequest(head: head, body: [])
                let length = Int(request.header("content-length") ?? "0") ?? 0
                guard let body = connection.readBytes(length) else { return }
                request.body = body
                let index = log.requests.withLock { list in
                    list.append(request)
                    return list.count - 1
                }
                if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds)) }
                let (status, text) = respond(index, request)
                let bytes = Array(text.utf8)
                connection.write(
                    "HTTP/1.1 \(status) X\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n" + text
                )
            }
        }
    }

    var requests: [ReceivedRequest] { log.requests.withLock { $0 } }
    func url(_ path: String) -> String { server.url(path) }
    func stop() { server.stop() }
}
