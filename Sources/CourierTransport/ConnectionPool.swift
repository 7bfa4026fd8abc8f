internal import CourierCore
internal import CourierHTTP1
internal import CourierPosix
internal import Logging
internal import Synchronization

/// Owns the connections of an ``HTTPClient``: a ``ConnectionPoolStateMachine`` run under a lock, which keeps all
/// the bookkeeping, and the things the machine only names by id: the connection objects, the continuations of
/// waiting requests and the idle timers. Each event reads the time once and passes it in; the machine's actions
/// are performed outside the lock by ``run(_:)`` (connect, close, arm idle timers, resume waiting requests).
///
/// Connection events (connect, reuse, idle close, stale detection) go to the background logger at `trace`
/// level; the connection gauges, when there are any, are recorded under the lock after each event.
final class ConnectionPool: Sendable {
    typealias Machine = ConnectionPoolStateMachine
    typealias RequestID = Machine.RequestID
    typealias ConnectionID = Machine.ConnectionID

    private struct State: ~Copyable {
        var machine: Machine
        var connections: [ConnectionID: HTTP1Connection] = [:]
        /// A request is here from the moment it enters the machine's queue until the machine answers it.
        var waiters: [RequestID: CheckedContinuation<HTTP1Connection, any Error>] = [:]
        /// Held strongly until they fire or are cancelled (closes cancel them): a weak reference would give the
        /// pool a side table and make every retain of it take the slow path.
        var idleTimers: [ConnectionID: (loop: EventLoop, timer: TimerID)] = [:]
        var nextRequestID: RequestID = 1
        /// Called once when no key is busy any more (a graceful shutdown waits for it).
        var onQuiet: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>
    /// Set by ``closeAll()``: requests still running were cut off by a shutdown, and fail with `shutdown`.
    private let closedByShutdown = Atomic<Bool>(false)
    private let configuration: HTTPClientConfiguration
    private let loops: EventLoopGroup
    let connector: Connector
    private let logger: Logger
    private let gauges: ConnectionGauges?

    init(
        configuration: HTTPClientConfiguration, loops: EventLoopGroup, connector: Connector, logger: Logger = HTTPClient.loggingDisabled,
        gauges: ConnectionGauges? = nil
    ) {
        self.configuration = configuration
        self.loops = loops
        self.connector = connector
        self.logger = logger
        self.gauges = gauges
        let machine = Machine(
            configuration: .init(maxConnectionsPerKey: configuration.maxConnectionsPerHost, idleTimeout: configuration.idleTimeout)
        )
        self.state = Mutex(State(machine: machine))
    }

    /// Runs `body` under the lock, trying it a few times before waiting: `Mutex` on Linux waits in the kernel (a
    /// priority-inheritance futex, `futex_lock_pi`), which cost about 2.6 % of the client's CPU at 64 requests in
    /// flight when the cooperative pool's threads met here, while the critical section is a few dictionary and
    /// state-machine operations. The number of tries is bounded. The connection gauges are recorded before the
    /// lock is released, so that they reach the backend in order.
    private func locked<R>(_ body: (inout sending State) -> sending R) -> sending R {
        for _ in 0..<32 {
            if let result = state.withLockIfAvailable({ s in recordingGauges(&s, body) }) { return result }
        }
        return state.withLock { s in recordingGauges(&s, body) }
    }

    private func recordingGauges<R>(_ s: inout sending State, _ body: (inout sending State) -> sending R) -> sending R {
        let result = body(&s)
        gauges?.record(open: s.machine.openCount, idle: s.machine.idleCount)
        return result
    }

    /// Runs one machine event under the lock and performs its action.
    private func event(_ body: (inout Machine) -> Machine.Action) {
        run(locked { s in body(&s.machine) })
    }

    // MARK: - Leasing

    /// A connection for `key`: an idle one (checked for a server-side close first), a new one, or the next one
    /// freed, in FIFO order with other waiting requests. Cancellation of the waiting task resumes it at once.
    nonisolated(nonsending) func lease(_ key: PoolKey, connectDeadline: Deadline) async throws -> HTTP1Connection {
        let (request, lease, idle) = locked { s -> (RequestID, Machine.IdleLease, HTTP1Connection?) in
            let request = s.nextRequestID
            s.nextRequestID &+= 1
            let lease = s.machine.leaseIdleConnection(key: key)
            guard case .leased(let id) = lease else { return (request, lease, nil) }
            return (request, lease, s.connections[id])
        }
        switch lease {
        case .refused:
            throw Self.error(.refused)
        case .wait:
            return try await wait(request, key: key, connectDeadline: connectDeadline, afterStale: nil)
        case .leased(let id):
            // The fast path: an idle connection was leased to us at once.
            guard let idle else { return try await wait(request, key: key, connectDeadline: connectDeadline, afterStale: id) }
            let stream = idle.stream
            if !stream.isQuietSinceLastRead() && (stream.isClosedByPeer() || stream.hasPendingInput()) {
                logger.trace("idle connection was closed by the server (stale): closing it", metadata: Self.metadata(idle))
                return try await wait(request, key: key, connectDeadline: connectDeadline, afterStale: id)
            }
            logger.trace("reusing an idle connection", metadata: Self.metadata(idle))
            return idle
        }
    }

    /// Waits for the machine's answer: the continuation is stored in the same critical section as the event that
    /// queues the request (``ConnectionPoolStateMachine/waitForConnection(_:key:connectDeadline:)``, or the stale
    /// connection's report, which queues it ahead of the others), so any later answer finds it.
    nonisolated(nonsending) private func wait(
        _ request: RequestID, key: PoolKey, connectDeadline: Deadline, afterStale stale: ConnectionID?
    ) async throws -> HTTP1Connection {
        try await CancellationScope.withCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTP1Connection, any Error>) in
                run(locked { s in
                    s.waiters[request] = continuation
                    guard let stale else {
                        return s.machine.waitForConnection(request, key: key, connectDeadline: connectDeadline)
                    }
                    return s.machine.leasedConnectionWasStale(stale, request: request, connectDeadline: connectDeadline)
                })
                // A task cancelled before it was queued ran its handler (below) when nothing was there to cancel.
                if CancellationScope.isCancelled { event { $0.cancelWaiter(request, key: key) } }
            }
        } onCancel: { [self] in
            event { $0.cancelWaiter(request, key: key) }
        }
    }

    /// Gives a connection back. `reusable` is the connection state machine's verdict.
    func release(_ connection: HTTP1Connection, reusable: Bool) {
        let now = Deadline.now()
        event { $0.connectionReleased(connection.id, reusable: reusable, now: now) }
    }

    /// Closes every idle connection of `key` (after a kept-alive connection turned out to be closed by the
    /// server, the others parked at the same time usually are too).
    func closeIdle(_ key: PoolKey) {
        logger.trace(
            "a reused connection had been closed by the server: closing the other idle ones",
            metadata: ["courier.pool": "\(key)"]
        )
        event { $0.closeIdleConnections(key: key) }
    }

    /// Closes idle connections, fails waiting requests; leased connections close as they come back.
    func shutdown() {
        event { $0.shutdown() }
    }

    /// Calls `callback` once no request holds or waits for a connection and none is being made: at once when
    /// that is so already. One callback at a time (a later one replaces an earlier one not yet called).
    func notifyWhenQuiet(_ callback: @escaping @Sendable () -> Void) {
        run(locked { s in
            s.onQuiet = callback
            return s.machine.notifyWhenQuiet()
        })
    }

    /// Ends everything (the end of a graceful shutdown's grace period, or a shutdown without one): like
    /// ``shutdown()``, and every connection in use is closed too, so the requests on them fail at once; they,
    /// and any request that still reaches the pool, fail with `shutdown`.
    func closeAll() {
        closedByShutdown.store(true, ordering: .sequentiallyConsistent)
        event { $0.closeAll() }
    }

    /// Whether ``closeAll()`` has cut off the requests still running.
    var wasClosedByShutdown: Bool { closedByShutdown.load(ordering: .sequentiallyConsistent) }

    /// Open connections (for tests and metrics).
    var openConnectionCount: Int { state.withLock { $0.machine.openCount } }

    // MARK: - Actions

    /// Performs an action of the machine: the one place the pool acts on its decisions.
    private func run(_ action: Machine.Action) {
        switch action.request {
        case .none:
            break
        case .runRequest(let request, let id):
            let (continuation, connection) = state.withLock { s in (s.waiters.removeValue(forKey: request), s.connections[id]) }
            // The connection is gone only when ``closeAll()`` closed it between the lease and this.
            continuation?.resume(with: connection.map { .success($0) } ?? .failure(Self.error(.shutDown)))
        case .failRequest(let request, let failure):
            resume(request, throwing: Self.error(failure))
        case .failRequests(let requests, let failure):
            for request in requests { resume(request, throwing: Self.error(failure)) }
        }
        switch action.connection {
        case .none:
            break
        case .createConnection(let id, let key, let deadline):
            startConnecting(id, key: key, deadline: deadline)
        case .scheduleIdleTimeout(let id, let deadline):
            armIdleTimer(id, at: deadline)
        case .closeConnection(let id):
            close(id)
        case .closeIdleTimedOut(let id):
            if let connection = close(id) {
                logger.trace("closing a connection idle for the idle timeout", metadata: Self.metadata(connection))
            }
        case .closeConnectionAndCreate(let old, let id, let key, let deadline):
            close(old)
            startConnecting(id, key: key, deadline: deadline)
        case .closeConnections(let ids):
            for id in ids { close(id) }
        }
        if action.notifiesQuiet {
            let callback = state.withLock { s in
                defer { s.onQuiet = nil }
                return s.onQuiet
            }
            callback?()
        }
    }

    private func resume(_ request: RequestID, throwing error: any Error) {
        state.withLock { $0.waiters.removeValue(forKey: request) }?.resume(throwing: error)
    }

    /// The error a request the machine fails is resumed with.
    private static func error(_ failure: Machine.Failure) -> any Error {
        switch failure {
        case .connect(let error): error
        case .cancelled: CancellationError()
        case .shutDown: CourierError(.shutdown, "the client was shut down")
        case .refused: CourierError(.cancelled, "the client was shut down")
        }
    }

    /// Drops a connection and its idle timer, and closes it.
    @discardableResult
    private func close(_ id: ConnectionID) -> HTTP1Connection? {
        let (connection, timer) = state.withLock { s in (s.connections.removeValue(forKey: id), s.idleTimers.removeValue(forKey: id)) }
        if let timer { _ = timer.loop.cancelTimer(timer.timer) }
        connection?.stream.close()
        return connection
    }

    private func armIdleTimer(_ id: ConnectionID, at deadline: Deadline) {
        let loop = loops.next()
        // Recorded under the lock before the timer can fire, so the handler always finds its own entry; not armed
        // for a connection closed meanwhile.
        state.withLock { s in
            guard s.connections[id] != nil else { return }
            s.idleTimers[id] = (loop, loop.scheduleTimer(at: deadline) { [self] in idleTimerFired(id) })
        }
    }

    private func idleTimerFired(_ id: ConnectionID) {
        let now = Deadline.now()
        run(locked { s in
            s.idleTimers[id] = nil
            return s.machine.idleTimerFired(id, now: now)
        })
    }

    /// The metadata of a connection's log lines: its pool key (origin and connect address) and id.
    private static func metadata(_ connection: HTTP1Connection) -> Logger.Metadata {
        ["courier.pool": "\(connection.key)", "courier.connection": "\(connection.id)"]
    }

    /// A failure's kind for a log line (never its message, which may name a file or an address).
    private static func errorType(_ error: any Error) -> String {
        (error as? CourierError).map { "\($0.kind)" } ?? "\(type(of: error))"
    }

    private func startConnecting(_ id: ConnectionID, key: PoolKey, deadline: Deadline) {
        // Shared by every request waiting for the key: no one load's cancellation ends it.
        Task { await CancellationScope.unscoped { await self.connect(id, key: key, deadline: deadline) } }
    }

    private func connect(_ id: ConnectionID, key: PoolKey, deadline: Deadline) async {
        do {
            let (stream, setup) = try await connector.connect(key, deadline: deadline)
            let connection = HTTP1Connection(
                id: id, key: key, stream: stream, limits: configuration.parserLimits, readSize: configuration.readSize
            )
            connection.setup = (dns: setup.dns, connect: setup.connect, tls: setup.tls)
            logger.trace("connected", metadata: Self.metadata(connection).merging([
                "courier.dns": "\(setup.dns)", "courier.connect": "\(setup.connect)", "courier.tls": "\(setup.tls ?? .zero)",
            ]) { $1 })
            let now = Deadline.now()
            run(locked { s in
                s.connections[id] = connection
                return s.machine.connectionEstablished(id, now: now)
            })
        } catch {
            logger.trace("connect failed", metadata: ["courier.pool": "\(key)", "error.type": "\(Self.errorType(error))"])
            event { $0.connectionFailed(id, error: error) }
        }
    }
}
