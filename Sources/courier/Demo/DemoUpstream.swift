internal import CourierPosix
internal import Synchronization

/// The demo's upstream: a tiny HTTP/1.1 server on 127.0.0.1, on a port the kernel picks, running inside the
/// demo's process on an event loop of its own. ``UpstreamScript`` decides every answer; this class only does the
/// I/O: accept, read one request (``UpstreamRequestParser``), write the reply, close.
///
/// Bounded: every read and write has a timeout, a request's size is capped by the parser, and ``stop()`` closes
/// the listener and every open connection, then waits for the accept loop and the handlers to end.
final class DemoUpstream: Sendable {
    /// The port the kernel chose; the same port on `[::1]` has nothing listening (checked at start).
    let port: Int

    private let group: EventLoopGroup
    private let listener: TCPListener
    private let origin: ContinuousClock.Instant
    private let script: Mutex<UpstreamScript>
    private let onRecord: @Sendable (UpstreamRecord) -> Void
    private let open = Mutex<(stopped: Bool, connections: [ObjectIdentifier: TCPConnection])>((false, [:]))
    private let serving = Mutex<Task<Void, Never>?>(nil)

    /// How long the upstream waits for a request's bytes or for the client to take the reply.
    private let ioTimeout: Duration
    /// Tries at finding a port whose `[::1]` twin is free.
    static let portTries = 5

    private init(
        group: EventLoopGroup, listener: TCPListener, origin: ContinuousClock.Instant, script: UpstreamScript,
        ioTimeout: Duration, onRecord: @escaping @Sendable (UpstreamRecord) -> Void
    ) {
        self.group = group
        self.ioTimeout = ioTimeout
        self.listener = listener
        self.port = listener.localAddress.port
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
    ///   - ioTimeout: how long a connection may take to send its request or take the reply.
    ///   - onRecord: called with each request answered (on the upstream's tasks).
    /// - Throws: ``DemoError/upstream(_:)`` when no port could be bound.
    static func start(
        script: UpstreamScript, origin: ContinuousClock.Instant, ioTimeout: Duration = .seconds(5),
        onRecord: @escaping @Sendable (UpstreamRecord) -> Void
    ) async throws(DemoError) -> DemoUpstream {
        let group: EventLoopGroup
        do {
            group = try EventLoopGroup(threads: 1, namePrefix: "demo-upstream")
        } catch {
            throw .upstream("cannot start the upstream's event loop: \(error)")
        }
        var last = "no port tried"
        for _ in 0..<portTries {
            let listener: TCPListener
            do {
                listener = try TCPListener.bind(host: "127.0.0.1", port: 0, on: group.next())
            } catch {
                last = "cannot listen on 127.0.0.1: \(error)"
                continue
            }
            let port = listener.localAddress.port
            if await somethingListens(onIPv6LoopbackPort: port, loop: group.next()) {
                last = "[::1]:\(port) accepts connections (another program listens there)"
                listener.close()
                continue
            }
            let upstream = DemoUpstream(
                group: group, listener: listener, origin: origin, script: script, ioTimeout: ioTimeout, onRecord: onRecord
            )
            upstream.serving.withLock { $0 = Task { await upstream.serve() } }
            return upstream
        }
        await group.shutdownGracefully()
        throw .upstream("no usable port after \(portTries) tries: \(last)")
    }

    /// Whether a connection to `[::1]:port` succeeds. A refusal, or a machine without IPv6, is what the demo
    /// wants: its "unreachable primary" is that address.
    private static func somethingListens(onIPv6LoopbackPort port: Int, loop: EventLoop) async -> Bool {
        guard let address = SocketAddress(ipAddress: "::1", port: port) else { return false }
        do {
            let connection = try await TCPConnection.connect(to: address, timeout: .seconds(1), on: loop)
            connection.close()
            return true
        } catch {
            return false
        }
    }

    /// Every request answered so far, in arrival order.
    var records: [UpstreamRecord] { script.withLock { $0.records } }

    /// Connections accepted and not yet closed.
    var openConnections: Int { open.withLock { $0.connections.count } }

    /// Access tokens the token endpoint issued.
    var tokensIssued: Int { script.withLock { $0.tokensIssued } }

    /// Stops listening, closes open connections and waits until every handler has ended.
    func stop() async {
        let connections = open.withLock { state -> [TCPConnection] in
            state.stopped = true
            return Array(state.connections.values)
        }
        listener.close()
        for connection in connections { connection.close() }
        await serving.withLock { $0 }?.value
        await group.shutdownGracefully()
    }

    // MARK: - Serving

    private func serve() async {
        await withDiscardingTaskGroup { handlers in
            while true {
                let connection: TCPConnection
                do {
                    connection = try await listener.accept()
                } catch {
                    // Closed by stop(), or the listener failed (it is closed then too).
                    return
                }
                let admitted = open.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.connections[ObjectIdentifier(connection)] = connection
                    return true
                }
                guard admitted else {
                    connection.close()
                    return
                }
                handlers.addTask {
                    await self.handle(connection)
                    connection.close()
                    _ = self.open.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
                }
            }
        }
    }

    /// Reads one request, writes the script's reply (or an error reply), and returns; the caller closes.
    private func handle(_ connection: TCPConnection) async {
        var parser = UpstreamRequestParser()
        var reply: UpstreamReply?
        do {
            while reply == nil {
                let bytes = try await connection.read(maxBytes: 16 * 1024, timeout: ioTimeout)
                guard !bytes.isEmpty else { return }  // the client closed before a whole request arrived
                do {
                    if let request = try parser.receive(bytes) {
                        reply = answer { $0.handle(request, at: $1) }
                    }
                } catch {
                    reply = answer { $0.reject(error, at: $1) }
                }
            }
            if let reply { try await connection.write(reply.serialized, timeout: ioTimeout) }
        } catch {
            // A read or write failed or timed out: the connection is closed, and the client sees that.
        }
    }

    private func answer(_ step: (inout UpstreamScript, Duration) -> (UpstreamReply, UpstreamRecord)) -> UpstreamReply {
        let at = ContinuousClock.now - origin
        let (reply, record) = script.withLock { step(&$0, at) }
        onRecord(record)
        return reply
    }
}
