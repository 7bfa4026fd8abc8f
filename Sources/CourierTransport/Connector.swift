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

    private let resolver: Resolver
    private let loops: EventLoopGroup
    /// One context per TLS policy: building one reads the trust store, and its session cache is what lets a
    /// second connection to an origin resume the first one's session.
    private let contexts = Mutex<[TLSPolicy: TLSContext]>([:])
    /// TLS streams this connector made that still exist (for leak tests).
    let liveTLSStreams = LiveCount()

    init(resolver: Resolver, loops: EventLoopGroup) {
        self.resolver = resolver
        self.loops = loops
    }

    /// Resolves (unless the connect host is an IP literal), connects, and for https runs the TLS handshake with
    /// SNI and verification against the origin's host (never the fallback address it connects to), all by
    /// `deadline` (the same instant all the way down to the socket's timer).
    nonisolated(nonsending) func connect(_ key: PoolKey, deadline: Deadline) async throws -> (any ByteStream, Setup) {
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
        let tcp = try await TCPConnection.connect(to: addresses, deadline: deadline, on: loops.next())
        let connected = Deadline.now()
        var setup = Setup(dns: isLiteral ? .zero : resolved - start, connect: connected - resolved, tls: nil)
        guard let policy = key.tls else { return (tcp, setup) }
        guard connected < deadline else {
            tcp.close()
            throw CourierError(.timeout, "connecting to \(key.connectHost) used the whole connect timeout before TLS")
        }
        let engine: TLSEngine
        do {
            engine = try TLSEngine(context: try await context(for: policy), serverName: key.host, port: key.port)
        } catch {
            tcp.close()
            throw error
        }
        do {
            let stream = try await TLSStream.handshake(over: tcp, engine: engine, deadline: deadline, tracker: liveTLSStreams)
            setup.tls = Deadline.now() - connected
            return (stream, setup)
        } catch let error as ConnectionError where error.kind == .readTimeout || error.kind == .writeTimeout {
            throw CourierError(.timeout, "the TLS handshake with \(key.host) did not finish within the connect timeout", cause: error)
        }
    }

    /// The context of `policy`, made on first use on a thread of its own: reading a trust store takes OpenSSL 3.0
    /// 0.1–0.4 s of CPU, which on the cooperative pool stalled every other task of the process (seen in the test
    /// suite: loader cancellations waiting seconds behind it).
    private func context(for policy: TLSPolicy) async throws(TLSError) -> TLSContext {
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
