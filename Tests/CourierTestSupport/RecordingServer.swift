import Foundation
import Synchronization

/// One request a ``RecordingServer`` received.
public struct ReceivedRequest: Sendable {
    /// The request line and header lines, CRLF-separated, without the blank line.
    public var head: String
    public var body: [UInt8]
    /// When the server had read the request head.
    public var received: ContinuousClock.Instant

    public init(head: String, body: [UInt8], received: ContinuousClock.Instant = .now) {
        self.head = head
        self.body = body
        self.received = received
    }

    public var requestLine: String { String(head.split(separator: "\r\n", omittingEmptySubsequences: false).first ?? "") }
    /// The request target, e.g. `/v1/a?x=1`.
    public var path: String {
        let parts = requestLine.split(separator: " ")
        return parts.count > 1 ? String(parts[1]) : ""
    }
    public var headerLines: [String] { head.split(separator: "\r\n").dropFirst().map(String.init) }
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The first field named `name` (case-insensitive), its value trimmed.
    public func header(_ name: String) -> String? {
        for line in headerLines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// A loopback HTTP/1.1 server (on ``ScriptedServer``, 127.0.0.1, a kernel-chosen port) that records every
/// request, head and body, and answers the n-th one (0-based, across connections) with what `respond` returns,
/// after the reply's delay. Connections are kept alive; each is served by its own thread, so delayed replies on
/// different connections overlap, and the server counts how many it was answering at once.
public final class RecordingServer: Sendable {
    /// What the server answers: the status line's code and reason, header fields, a body (sent with a
    /// `Content-Length`), and how long to wait before answering.
    public struct Reply: Sendable {
        public var status: Int
        public var reason: String
        public var headers: [(String, String)]
        public var body: String
        public var delay: Duration

        public init(
            status: Int = 200, reason: String = "Scripted", headers: [(String, String)] = [], body: String = "ok",
            delay: Duration = .zero
        ) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        /// A JSON body with `Content-Type: application/json`.
        public static func json(_ status: Int, _ text: String, delay: Duration = .zero) -> Reply {
            Reply(status: status, headers: [("Content-Type", "application/json")], body: text, delay: delay)
        }
    }

    private struct Log {
        var requests: [ReceivedRequest] = []
        var inFlight = 0
        var maxInFlight = 0
        var lastAnswer: ContinuousClock.Instant?
    }

    /// The log, shared by the connection threads and the test.
    private final class LogBox: Sendable {
        let state = Mutex(Log())
        func withLock<T>(_ body: (inout Log) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let server: ScriptedServer
    private let log: LogBox

    /// Starts the server; by default every request gets 200 with the body `ok`.
    public init(respond: @escaping @Sendable (_ index: Int, _ request: ReceivedRequest) -> Reply = { _, _ in Reply() }) throws {
        let log = LogBox()
        server = try ScriptedServer { connection in
            while let head = connection.readRequestHead() {
                var request = ReceivedRequest(head: head, body: [])
                if request.header("transfer-encoding")?.lowercased() == "chunked" {
                    guard let body = connection.readChunkedBody() else { return }
                    request.body = body
                } else {
                    let length = Int(request.header("content-length") ?? "0") ?? 0
                    guard let body = connection.readBytes(length) else { return }
                    request.body = body
                }
                let index = log.withLock { log in
                    log.requests.append(request)
                    log.inFlight += 1
                    log.maxInFlight = max(log.maxInFlight, log.inFlight)
                    return log.requests.count - 1
                }
                let reply = respond(index, request)
                if reply.delay > .zero {
                    let (seconds, attoseconds) = reply.delay.components
                    Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                }
                var text = "HTTP/1.1 \(reply.status) \(reply.reason)\r\nContent-Length: \(reply.body.utf8.count)\r\n"
                for (name, value) in reply.headers { text += "\(name): \(value)\r\n" }
                connection.write(text + "\r\n" + reply.body)
                log.withLock { log in
                    log.inFlight -= 1
                    log.lastAnswer = .now
                }
            }
        }
        self.log = log
    }

    /// The requests received so far, in arrival order.
    public var requests: [ReceivedRequest] { log.withLock { $0.requests } }
    /// The most requests the server was answering at the same time.
    public var maxInFlight: Int { log.withLock { $0.maxInFlight } }
    /// From the first request's arrival to the last answer written (nil before any answer): how long the server
    /// was busy, without the client's start-up.
    public var busySpan: Duration? {
        log.withLock { log in
            guard let first = log.requests.first?.received, let last = log.lastAnswer else { return nil }
            return last - first
        }
    }
    public var port: Int { server.port }

    /// `http://127.0.0.1:PORT` + path.
    public func url(_ path: String) -> String { server.url(path) }
    /// The same server under the name `localhost` (a different host for a policy's routes).
    public func localhostURL(_ path: String) -> String { "http://localhost:\(server.port)\(path)" }
    public func stop() { server.stop() }
}
