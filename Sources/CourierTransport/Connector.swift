internal import CourierCore
internal import CourierPosix
internal import CourierTLS
internal import Synchronization

/// The one seam where connections are made: turns a pool key (origin, connect address and TLS settings) into a
/// connected ``ByteStream`` (a ``TCPConnection``, or a ``TLSStream`` over one for https), with its set-up times.
/// The pool decides when to connect; this decides how.
final class Connector: Sendable {
    /// Set-up times of a new connection.
    struct Setup {
        var dns: Duration
        var connect: Duration
        var tls: Duration?
    }

    /// Where a new connection is made: the loop whose epoll set will carry it, and the executor its set-up runs
    /// on (that loop, or nil for the cooperative pool). See ``placeSetUp()``.
    struct Placement {
        let loop: EventLoop
        let executor: (any TaskExecutor)?
    }

    let resolver: Resolver
    let loops: EventLoopGroup
    /// The loops (by index) running a set-up on their own thread right now: at most one each.
    private let loopsSettingUp = Mutex<Set<Int>>([])
    /// One context per TLS policy: building one reads the trust store, and its session cache is what lets a
    /// second connection to an origin resume the first one's session.
    private let contexts = Mutex<[TLSPolicy: TLSContext]>([:])
    /// TLS streams this connector made that still exist (for leak tests).
    let liveTLSStreams = LiveCount()

    init(resolver: Resolver, loops: EventLoopGroup) {
        self.resolver = resolver
        self.loops = loops
    }

    /// Picks the loop of a new connection and where its set-up (connect and TLS handshake) runs: on that loop's
    /// own thread unless another set-up is already running there. On the loop, every wait of the set-up (the
    /// connect, each handshake flight) is the loop's own sleep in `epoll_wait`, where on the cooperative pool
    /// each is a hand-over from the loop to a pool thread (a `futex` wake-up and two context switches), and the
    /// loop arms the socket's timers and registers its descriptor without waking itself. A new TLS connection
    /// took about 10 context switches before, about 8 after (`perf stat`, resumed handshakes against nginx). At most
    /// one at a time, because a handshake's cryptography (0.1–0.3 ms of CPU) delays every other connection's
    /// I/O on that loop: with many connections made at once the others run on the pool, as before, and use the
    /// other cores. Call ``setUpEnded(_:)`` with the placement when the set-up is over.
    func placeSetUp() -> Placement {
        let loop = loops.next()
        let claimed = loopsSettingUp.withLock { $0.insert(loop.index).inserted }
        return Placement(loop: loop, executor: claimed ? loop : nil)
    }

    /// The set-up placed by `placement` is over (connected or failed).
    func setUpEnded(_ placement: Placement) {
        guard placement.executor != nil else { return }
        _ = loopsSettingUp.withLock { $0.remove(placement.loop.index) }
    }

    /// Resolves (unless the connect host is an IP literal), connects, and for https runs the TLS handshake with
    /// SNI and verification against the origin's host (never the fallback address it connects to), all by
    /// `deadline` (the same instant all the way down to the socket's timer). The connection uses `loop` (by
    /// default the group's next).
    nonisolated(nonsending) func connect(_ key: PoolKey, deadline: Deadline, on loop: EventLoop? = nil) async throws -> (any ByteStream, Setup) {
        // The TLS context first: an unusable client certificate or CA file is a local error, found before any
        // connection is made.
        var tlsContext: TLSContext?
        if let policy = key.tls { tlsContext = try await context(for: policy) }
        if let path = key.unixSocketPath {
            return try await connect(key, unixSocket: path, tlsContext: tlsContext, deadline: deadline, on: loop ?? loops.next())
        }
        if let proxy = key.proxy {
            return try await connect(key, through: proxy, tlsContext: tlsContext, deadline: deadline, on: loop)
        }
        let start = Deadline.now()
        let addresses: [SocketAddress]
        let isLiteral: Bool
        if let literal = SocketAddress(ipAddress: key.connectHost, port: key.connectPort) {
            addresses = [literal]
            isLiteral = true
        } else {
            addresses = try await resolver.resolve(host: key.connectHost, port: key.connectPort)
            isLiteral = false
        }
        let resolved = Deadline.now()
        guard resolved < deadline else {
            throw CourierError(.timeout, "resolving \(key.connectHost) used the whole connect timeout")
        }
        let tcp = try await TCPConnection.connect(to: addresses, deadline: deadline, on: loop ?? loops.next())
        let connected = Deadline.now()
        let setup = Setup(dns: isLiteral ? .zero : resolved - start, connect: connected - resolved, tls: nil)
        return try await secure(tcp, key: key, tlsContext: tlsContext, setup: setup, deadline: deadline)
    }

    /// Connects to the Unix domain socket of `key` (no resolving: `Setup.dns` is zero), then TLS for https.
    nonisolated(nonsending) private func connect(
        _ key: PoolKey, unixSocket path: String, tlsContext: TLSContext?, deadline: Deadline, on loop: EventLoop
    ) async throws -> (any ByteStream, Setup) {
        let start = Deadline.now()
        let connection: TCPConnection
        do {
            connection = try await TCPConnection.connect(unixSocket: path, deadline: deadline, on: loop)
        } catch let error as ConnectionError where error.kind == .connectFailed || error.kind == .noAddresses {
            let reason = error.attempts.first.map { ": \($0.error.errnoDescription)" }
                ?? " (a socket path is at most \(SocketAddress.maxUnixPathLength) bytes)"
            throw CourierError(.connect, "could not connect to the Unix socket \(path)\(reason)", cause: error)
        }
        let setup = Setup(dns: .zero, connect: Deadline.now() - start, tls: nil)
        return try await secure(connection, key: key, tlsContext: tlsContext, setup: setup, deadline: deadline)
    }

    /// `tcp` as it is for plain http, or a ``TLSStream`` over it after the handshake with the origin's name.
    nonisolated(nonsending) private func secure(
        _ tcp: TCPConnection, key: PoolKey, tlsContext: TLSContext?, setup: Setup, deadline: Deadline
    ) async throws -> (any ByteStream, Setup) {
        var setup = setup
        let connected = Deadline.now()
        guard let tlsContext else { return (tcp, setup) }
        guard connected < deadline else {
            tcp.close()
            throw CourierError(.timeout, "connecting to \(key.connectHost) used the whole connect timeout before TLS")
        }
        let stream = try await originTLS(over: tcp, key: key, context: tlsContext, deadline: deadline)
        setup.tls = Deadline.now() - connected
        return (stream, setup)
    }

    /// TLS to the origin over `transport` (the socket, or a proxy's tunnel) with the origin's SNI, verification and
    /// pins (`context`, the key's TLS policy's), by `deadline`. On failure `transport` is closed.
    nonisolated(nonsending) func originTLS<Transport: TLSTransport>(
        over transport: Transport, key: PoolKey, context: TLSContext, deadline: Deadline
    ) async throws -> TLSStream<Transport> {
        let engine: TLSEngine
        do {
            engine = try TLSEngine(context: context, serverName: key.host, port: key.port)
        } catch {
            transport.close()
            throw error
        }
        do {
            return try await TLSStream.handshake(over: transport, engine: engine, deadline: deadline, tracker: liveTLSStreams)
        } catch let error as ConnectionError where error.kind == .readTimeout || error.kind == .writeTimeout {
            throw CourierError(.timeout, "the TLS handshake with \(key.host) did not finish within the connect timeout", cause: error)
        }
    }

    /// The context of `policy`, made on first use on a thread of its own: reading a trust store takes OpenSSL 3.0
    /// 0.1–0.4 s of CPU, which on the cooperative pool stalled every other task of the process (seen in the test
    /// suite: loader cancellations waiting seconds behind it).
    func context(for policy: TLSPolicy) async throws(TLSError) -> TLSContext {
        if let context = contexts.withLock({ $0[policy] }) { return context }
        let made = try await ThreadOfItsOwn.run(name: "courier-tls-ctx") { () throws(TLSError) -> TLSContext in
            try TLSContext(policy: policy)
        }
        return contexts.withLock { table in
            if let existing = table[policy] { return existing }
            table[policy] = made
            return made
        }
    }
}
