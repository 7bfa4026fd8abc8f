internal import CourierCore
internal import CourierPosix
internal import CourierTesting
internal import Synchronization

/// The demo's upstream: CourierTesting's ``MockServer`` on 127.0.0.1, on a port the kernel picks, inside the demo's
/// process. ``UpstreamScript`` decides every answer (a route for each method it knows, every path); the server
/// does the I/O, reads requests with Courier's own request parser (a malformed one gets its 4xx from the server
/// and is not the script's business), keeps connections alive, and bounds every read and write.
final class DemoUpstream: Sendable {
    /// The port the kernel chose; the same port on `[::1]` has nothing listening (checked at start).
    let port: Int

    private let server: MockServer
    private let origin: ContinuousClock.Instant
    private let script: Mutex<UpstreamScript>
    private let onRecord: @Sendable (UpstreamRecord) -> Void

    /// Tries at finding a port whose `[::1]` twin is free.
    static let portTries = 5

    private init(
        server: MockServer, origin: ContinuousClock.Instant, script: UpstreamScript,
        onRecord: @escaping @Sendable (UpstreamRecord) -> Void
    ) {
        self.server = server
        self.port = server.port
        self.origin = origin
        self.script = Mutex(script)
        self.onRecord = onRecord
    }

    /// Binds 127.0.0.1 on a free port and starts serving.
    ///
    /// The fallback scenario needs `[::1]` on the same port to refuse connections, so a port whose `[::1]` twin
    /// accepts a connection (another program listens there) is given back and another one is tried.
    ///
    /// - Parameters:
    ///   - script: what to answer.
    ///   - origin: the demo's start, which records' times count from.
    ///   - ioTimeout: how long a connection may take to send its request or take the reply, and may stay idle.
    ///   - onRecord: called with each request answered (on the server's tasks).
    /// - Throws: ``DemoError/upstream(_:)`` when no port could be bound.
    static func start(
        script: UpstreamScript, origin: ContinuousClock.Instant, ioTimeout: Duration = .seconds(5),
        onRecord: @escaping @Sendable (UpstreamRecord) -> Void
    ) async throws(DemoError) -> DemoUpstream {
        var configuration = MockServer.Configuration()
        configuration.ioTimeout = ioTimeout
        configuration.idleTimeout = ioTimeout
        var last = "no port tried"
        for _ in 0..<portTries {
            let server: MockServer
            do {
                server = try MockServer(configuration: configuration)
            } catch {
                last = "\(error)"
                continue
            }
            if await somethingListens(onIPv6LoopbackPort: server.port) {
                last = "[::1]:\(server.port) accepts connections (another program listens there)"
                await server.shutdown()
                continue
            }
            let upstream = DemoUpstream(server: server, origin: origin, script: script, onRecord: onRecord)
            for method in [HTTPMethod.get, .post] {
                server.on(method, "*") { [weak upstream] request in upstream?.answer(request) ?? .status(503) }
            }
            return upstream
        }
        throw .upstream("no usable port after \(portTries) tries: \(last)")
    }

    /// Whether a connection to `[::1]:port` succeeds. A refusal, or a machine without IPv6, is what the demo
    /// wants: its "unreachable primary" is that address.
    private static func somethingListens(onIPv6LoopbackPort port: Int) async -> Bool {
        guard let address = SocketAddress(ipAddress: "::1", port: port) else { return false }
        do {
            let connection = try await TCPConnection.connect(to: address, timeout: .seconds(1), on: EventLoopGroup.shared.next())
            connection.close()
            return true
        } catch {
            return false
        }
    }

    /// Every request the script answered so far, in arrival order.
    var records: [UpstreamRecord] { script.withLock { $0.records } }

    /// Connections the server accepted so far.
    var acceptedConnections: Int { server.acceptedConnections }

    /// Access tokens the token endpoint issued.
    var tokensIssued: Int { script.withLock { $0.tokensIssued } }

    /// Stops listening, closes open connections and waits until every handler has ended.
    func stop() async {
        await server.shutdown()
    }

    private func answer(_ request: MockRequest) -> MockResponse {
        let upstreamRequest = UpstreamRequest(
            method: request.method.rawValue, target: request.target, headers: request.headers, body: request.body
        )
        let (reply, record) = script.withLock { $0.handle(upstreamRequest, at: request.receivedAt - origin) }
        onRecord(record)
        return reply.response
    }
}
