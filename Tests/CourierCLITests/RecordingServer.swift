import CourierTestSupport
import Foundation
import Synchronization

/// A loopback HTTP/1.1 server for the fetch tests (on ``ScriptedServer``): it records every request, answers
/// the n-th (0-based) with `respond`, optionally after a delay, and counts how many it was answering at once.
final class RecordingServer: Sendable {
    struct Received: Sendable {
        var head: String
        /// When the server read the request head.
        var at: ContinuousClock.Instant

        var requestLine: String { String(head.split(separator: "\r\n", omittingEmptySubsequences: false).first ?? "") }
        /// The request target, e.g. `/v1/a`.
        var path: String {
            let parts = requestLine.split(separator: " ")
            return parts.count > 1 ? String(parts[1]) : ""
        }

        func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                if line[..<colon].lowercased() == name.lowercased() {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    struct Reply: Sendable {
        var status = 200
        var headers: [(String, String)] = []
        var body = "ok"
        var delay: Duration = .zero
    }

    private struct Log {
        var requests: [Received] = []
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
    init(respond: @escaping @Sendable (_ index: Int, _ request: Received) -> Reply = { _, _ in Reply() }) throws {
        let log = LogBox()
        server = try ScriptedServer { connection in
            while let head = connection.readRequestHead() {
                let received = Received(head: head, at: .now)
                let length = Int(received.header("content-length") ?? "0") ?? 0
                guard connection.readBytes(length) != nil else { return }
                let index = log.withLock { log in
                    log.requests.append(received)
                    log.inFlight += 1
                    log.maxInFlight = max(log.maxInFlight, log.inFlight)
                    return log.requests.count - 1
                }
                let reply = respond(index, received)
                if reply.delay > .zero {
                    Thread.sleep(forTimeInterval: Double(reply.delay.components.seconds) + Double(reply.delay.components.attoseconds) / 1e18)
                }
                var text = "HTTP/1.1 \(reply.status) Scripted\r\nContent-Length: \(reply.body.utf8.count)\r\n"
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
    var requests: [Received] { log.withLock { $0.requests } }
    /// The most requests the server was answering at the same time.
    var maxInFlight: Int { log.withLock { $0.maxInFlight } }
    /// From the first request's arrival to the last answer written (nil before any answer): how long the server
    /// was busy, without the client's start-up.
    var busySpan: Duration? {
        log.withLock { log in
            guard let first = log.requests.first?.at, let last = log.lastAnswer else { return nil }
            return last - first
        }
    }
    var port: Int { server.port }

    /// `http://127.0.0.1:PORT` + path.
    func url(_ path: String) -> String { server.url(path) }
    /// The same server under the name `localhost` (a different host for the policy's routes).
    func localhostURL(_ path: String) -> String { "http://localhost:\(server.port)\(path)" }
    func stop() { server.stop() }
}
