import CourierCore
import CourierHTTP1
import CourierPosix
import Logging
import Synchronization

/// Owns the connections of an ``HTTPClient``: one ``ConnectionPoolStateMachine`` per pool key, run under a lock,
/// with the machines' actions performed outside it (connect, close, arm idle timers, resume waiting requests).
///
/// Connection events (connect, reuse, idle close, stale detection) go to the background logger at `trace`
/// level; the connection gauges, when there are any, are recorded under the lock after each change.
final class ConnectionPool: Sendable {
    typealias RequestID = ConnectionPoolStateMachine.RequestID
    typealias ConnectionID = ConnectionPoolStateMachine.ConnectionID

    private struct State: ~Copyable {
        var machines: [PoolKey: ConnectionPoolStateMachine] = [:]
        var keyBases: [PoolKey: UInt64] = [:]
        var nextKeyBase: UInt64 = 1
        var connections: [ConnectionID: HTTP1Connection] = [:]
        var waiters: [RequestID: CheckedContinuation<HTTP1Connection, any Error>] = [:]
        /// Outcomes that arrived before the waiting request registered its continuation.
        var early: [RequestID: Result<HTTP1Connection, any Error>] = [:]
        /// The connect deadline of the request that made a connection necessary.
        var connectDeadlines: [PoolKey: MonotonicInstant] = [:]
        /// When each idle connection was parked, and with which generation (the machine's idle-timer tag).
        var parked: [ConnectionID: (generation: UInt64, since: MonotonicInstant)] = [:]
        /// The idle timer armed for a connection, if any. Timers are lazy: one armed for an earlier idle period
        /// stays armed while the connection is leased and parked again, and when it fires it closes the
        /// connection only if it has been idle for the whole idle timeout, re-arming otherwise. A busy
        /// connection thus costs no timer work per request.
        var idleTimers: [ConnectionID: (loop: EventLoop, timer: TimerID)] = [:]
        var nextRequestID: RequestID = 1
        var isShutDown = false
        /// Called once when no key is busy any more (a graceful shutdown waits for it).
        var onQuiet: (@Sendable () -> Void)?
    }

    /// A deferred effect, performed after the lock is released.
    private enum Effect {
        case resume(RequestID, Result<HTTP1Connection, any Error>)
        case connect(ConnectionID, PoolKey, MonotonicInstant)
        case close(HTTP1Connection)
        case armIdleTimer(ConnectionID, at: MonotonicInstant)
        case cancelTimer(EventLoop, TimerID)
        case quiet(@Sendable () -> Void)
    }

    private let state = Mutex(State())
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
    }

    /// Records the connection gauges (under the lock, so that they reach the backend in order).
    private func recordGauges(_ s: borrowing State) {
        gauges?.record(open: s.connections.count, idle: s.parked.count)
    }

    /// Runs `body` under the lock for the hot paths (lease and release), trying it a few times before waiting:
    /// `Mutex` on Linux waits in the kernel (a priority-inheritance futex, `futex_lock_pi`), which cost about 2.6 %
    /// of the client's CPU at 64 requests in flight when the cooperative pool's threads met here, while the
    /// critical section is a few dictionary and state-machine operations. The number of tries is bounded.
    private func locked<R>(_ body: (inout sending State) -> sending R) -> sending R {
        for _ in 0..<32 {
            if let result = state.withLockIfAvailable(body) { return result }
        }
        return state.withLock(body)
    }

    // MARK: - Leasing

    /// A connection for `key`: an idle one (checked for a server-side close first), a new one, or the next one
    /// freed, in FIFO order with other waiting requests. Cancellation of the waiting task resumes it at once.
    nonisolated(nonsending) func lease(_ key: PoolKey, connectDeadline: MonotonicInstant) async throws -> HTTP1Connection {
        let (request, outcome) = locked { s -> (RequestID, LeaseOutcome) in
            let request = s.nextRequestID
            s.nextRequestID &+= 1
            return (request, leaseOutcome(request, key: key, connectDeadline: connectDeadline, in: &s))
        }
        switch outcome {
        case .effects(let effects):
            perform(effects)
            return try await wait(for: request, key: key)
        case .leased(let connection):
            // Fast path: an idle connection was leased to us at once.
            let stream = connection.stream
            if !stream.isQuietSinceLastRead() && (stream.isClosedByPeer() || stream.hasPendingInput()) {
                logger.trace(
                    "idle connection was closed by the server (stale): closing it", metadata: Self.metadata(connection)
                )
                let more = state.withLock { s -> [Effect] in
                    let (action, empty) = Self.modify(&s.machines[key]!) {
                        $0.leasedConnectionWasStale(connection.id, request: request)
                    }
                    var out: [Effect] = []
                    forget(connection.id, in: &s, into: &out)
                    return out + translate(action, key: key, machineIsEmpty: empty, in: &s)
                }
                perform(more)
                // The request is queued again (or was handed another idle connection): wait below.
                return try await wait(for: request, key: key)
            }
            logger.trace("reusing an idle connection", metadata: Self.metadata(connection))
            return connection
        }
    }

    private enum LeaseOutcome {
        /// An idle connection, leased to the request at once.
        case leased(HTTP1Connection)
        /// Effects to perform, after which the request waits.
        case effects([Effect])
    }

    /// Runs the machine's `requestConnection` for `request` and translates its answer (under the lock).
    private func leaseOutcome(_ request: RequestID, key: PoolKey, connectDeadline: MonotonicInstant, in s: inout State) -> LeaseOutcome {
        guard !s.isShutDown else {
            return .effects([.resume(request, .failure(CourierError(.cancelled, "the client was shut down")))])
        }
        if s.machines[key] == nil { s.machines[key] = newMachine(for: key, in: &s) }
        let (action, empty) = Self.modify(&s.machines[key]!) { $0.requestConnection(request) }
        if case .lease(let id, _) = action.request, case .none = action.connection, let connection = s.connections[id] {
            // The common case, without building an effect list.
            s.parked[id] = nil
            recordGauges(s)
            return .leased(connection)
        }
        if case .lease = action.request {} else { s.connectDeadlines[key] = connectDeadline }
        return .effects(translate(action, key: key, machineIsEmpty: empty, in: &s))
    }

    nonisolated(nonsending) private func wait(for request: RequestID, key: PoolKey) async throws -> HTTP1Connection {
        try await CancellationScope.withCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTP1Connection, any Error>) in
                let ready = state.withLock { s -> Result<HTTP1Connection, any Error>? in
                    if let result = s.early.removeValue(forKey: request) { return result }
                    s.waiters[request] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: { [self] in
            let effects = state.withLock { s -> [Effect] in
                guard s.machines[key] != nil else { return [] }
                let (action, empty) = Self.modify(&s.machines[key]!) { $0.cancelRequest(request) }
                var out = translate(action, key: key, machineIsEmpty: empty, in: &s)
                if s.onQuiet != nil { quietCheck(&s, into: &out) }
                return out
            }
            perform(effects)
        }
    }

    /// Gives a connection back. `reusable` is the connection state machine's verdict.
    func release(_ connection: HTTP1Connection, reusable: Bool) {
        let effects = locked { s -> [Effect] in
            guard s.machines[connection.key] != nil else { return [.close(connection)] }
            let (action, empty) = Self.modify(&s.machines[connection.key]!) {
                $0.connectionReleased(connection.id, reusable: reusable)
            }
            var out = translate(action, key: connection.key, machineIsEmpty: empty, in: &s)
            if s.onQuiet != nil { quietCheck(&s, into: &out) }
            return out
        }
        perform(effects)
    }

    /// Closes every idle connection of `key` (after a kept-alive connection turned out to be closed by the
    /// server, the others parked at the same time usually are too).
    func closeIdle(_ key: PoolKey) {
        logger.trace(
            "a reused connection had been closed by the server: closing the other idle ones",
            metadata: ["courier.pool": "\(key)"]
        )
        let effects = state.withLock { s -> [Effect] in
            guard s.machines[key] != nil else { return [] }
            var out: [Effect] = []
            let idle = s.connections.values.filter { $0.key == key && s.parked[$0.id] != nil }
            for connection in idle {
                guard s.machines[key] != nil else { break }
                let (action, empty) = Self.modify(&s.machines[key]!) { $0.idleConnectionClosed(connection.id) }
                out += translate(action, key: key, machineIsEmpty: empty, in: &s)
            }
            return out
        }
        perform(effects)
    }

    /// Closes idle connections, fails waiting requests; leased connections close as they come back.
    func shutdown() {
        let effects = state.withLock { s -> [Effect] in
            s.isShutDown = true
            var out: [Effect] = []
            for key in Array(s.machines.keys) {
                let (close, fail) = s.machines[key]!.shutdown()
                for id in close { forget(id, in: &s, into: &out) }
                for r in fail { out.append(.resume(r, .failure(CourierError(.shutdown, "the client was shut down")))) }
            }
            recordGauges(s)
            return out
        }
        perform(effects)
    }

    /// Calls `callback` once no request holds or waits for a connection and none is being made: at once when
    /// that is so already. One callback at a time (a later one replaces an earlier one not yet called).
    func notifyWhenQuiet(_ callback: @escaping @Sendable () -> Void) {
        let quietNow = state.withLock { s -> Bool in
            if s.machines.values.contains(where: \.isBusy) {
                s.onQuiet = callback
                return false
            }
            return true
        }
        if quietNow { callback() }
    }

    /// The quiet callback, if one is waiting and no key is busy any more (under the lock, after an event that
    /// may have freed the last connection); the hot paths call it only when a callback is waiting.
    private func quietCheck(_ s: inout State, into out: inout [Effect]) {
        guard let callback = s.onQuiet, !s.machines.values.contains(where: \.isBusy) else { return }
        s.onQuiet = nil
        out.append(.quiet(callback))
    }

    /// Ends everything (the end of a graceful shutdown's grace period, or a shutdown without one): like
    /// ``shutdown()``, and every connection in use is closed too, so the requests on them fail at once; they,
    /// and any request that still reaches the pool, fail with `shutdown`.
    func closeAll() {
        closedByShutdown.store(true, ordering: .sequentiallyConsistent)
        shutdown()
        let effects = state.withLock { s -> [Effect] in
            var out: [Effect] = []
            for id in Array(s.connections.keys) { forget(id, in: &s, into: &out) }
            if let callback = s.onQuiet {
                s.onQuiet = nil
                out.append(.quiet(callback))
            }
            return out
        }
        perform(effects)
    }

    /// Whether ``closeAll()`` has cut off the requests still running.
    var wasClosedByShutdown: Bool { closedByShutdown.load(ordering: .sequentiallyConsistent) }

    /// Open connections (for tests and metrics).
    var openConnectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: - Actions

    private func newMachine(for key: PoolKey, in s: inout State) -> ConnectionPoolStateMachine {
        let base = s.keyBases[key] ?? {
            let b = s.nextKeyBase << 32
            s.nextKeyBase += 1
            s.keyBases[key] = b
            return b
        }()
        return ConnectionPoolStateMachine(
            configuration: .init(maxConnections: configuration.maxConnectionsPerHost),
            firstConnectionID: base
        )
    }

    /// Runs one event on a machine in place (a copy taken out of the dictionary would copy its sets on the
    /// first write) and says whether the machine is left empty.
    private static func modify(
        _ machine: inout ConnectionPoolStateMachine,
        _ event: (inout ConnectionPoolStateMachine) -> ConnectionPoolStateMachine.Action
    ) -> (ConnectionPoolStateMachine.Action, empty: Bool) {
        let action = event(&machine)
        return (action, machine.isEmpty)
    }

    /// Turns a machine action into effects, updating the bookkeeping under the lock.
    private func translate(
        _ action: ConnectionPoolStateMachine.Action, key: PoolKey, machineIsEmpty: Bool, in s: inout State
    ) -> [Effect] {
        var out: [Effect] = []
        switch action.request {
        case .none: break
        case .lease(let id, let request):
            // The idle timer, if armed, stays: it re-checks the connection when it fires.
            s.parked[id] = nil
            if let connection = s.connections[id] { out.append(.resume(request, .success(connection))) }
        case .failWithConnectError(let request):
            // The caller that reports the connect failure supplies the error (see connectFinished).
            out.append(.resume(request, .failure(CourierError(.connect, "could not connect to \(key)"))))
        case .cancelled(let request):
            out.append(.resume(request, .failure(CancellationError())))
        }
        switch action.connection {
        case .none: break
        case .create(let id):
            out.append(.connect(id, key, s.connectDeadlines[key] ?? .now() + configuration.timeouts.connect))
        case .close(let id):
            forget(id, in: &s, into: &out)
        case .park(let id, let generation):
            let now = MonotonicInstant.now()
            s.parked[id] = (generation, now)
            if s.idleTimers[id] == nil { out.append(.armIdleTimer(id, at: now + configuration.idleTimeout)) }
        case .closeAndCreate(let old, let new):
            forget(old, in: &s, into: &out)
            out.append(.connect(new, key, s.connectDeadlines[key] ?? .now() + configuration.timeouts.connect))
        }
        if machineIsEmpty { s.machines[key] = nil }
        recordGauges(s)
        return out
    }

    /// Drops a connection's bookkeeping, cancelling its idle timer and closing it.
    private func forget(_ id: ConnectionID, in s: inout State, into out: inout [Effect]) {
        s.parked[id] = nil
        if let t = s.idleTimers.removeValue(forKey: id) { out.append(.cancelTimer(t.loop, t.timer)) }
        if let c = s.connections.removeValue(forKey: id) { out.append(.close(c)) }
    }

    private func perform(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .resume(let request, let result):
                let continuation = state.withLock { s -> CheckedContinuation<HTTP1Connection, any Error>? in
                    if let c = s.waiters.removeValue(forKey: request) { return c }
                    s.early[request] = result
                    return nil
                }
                continuation?.resume(with: result)
            case .connect(let id, let key, let deadline):
                // Shared by every request waiting for the key: no one load's cancellation ends it.
                Task { await CancellationScope.unscoped { await self.connect(id, key: key, deadline: deadline) } }
            case .close(let connection):
                connection.stream.close()
            case .armIdleTimer(let id, let deadline):
                armIdleTimer(id, at: deadline)
            case .cancelTimer(let loop, let timer):
                _ = loop.cancelTimer(timer)
            case .quiet(let callback):
                callback()
            }
        }
    }

    private func armIdleTimer(_ id: ConnectionID, at deadline: MonotonicInstant) {
        let loop = loops.next()
        // Recorded under the lock before the timer can fire, so the handler always finds its own entry.
        state.withLock { s in
            guard s.connections[id] != nil, s.idleTimers[id] == nil else { return }
            // Held strongly until it fires or is cancelled (shut-down and closes cancel it): a weak reference
            // would give the pool a side table and make every retain of it take the slow path.
            let timer = loop.scheduleTimer(at: deadline) { [self] in idleTimerFired(id) }
            s.idleTimers[id] = (loop, timer)
        }
    }

    /// An idle timer fired: close the connection if it has been parked for the whole idle timeout, re-arm for
    /// the rest of the period if it was parked again since, and let the next park arm one if it is leased.
    private func idleTimerFired(_ id: ConnectionID) {
        var rearm: MonotonicInstant?
        let effects = state.withLock { s -> [Effect] in
            s.idleTimers[id] = nil
            guard let connection = s.connections[id], let parked = s.parked[id], s.machines[connection.key] != nil else {
                return []
            }
            let due = parked.since + configuration.idleTimeout
            if due > MonotonicInstant.now() {
                rearm = due
                return []
            }
            let (action, empty) = Self.modify(&s.machines[connection.key]!) {
                $0.idleTimeout(id, generation: parked.generation)
            }
            logger.trace("closing a connection idle for the idle timeout", metadata: Self.metadata(connection))
            return translate(action, key: connection.key, machineIsEmpty: empty, in: &s)
        }
        perform(effects)
        if let rearm { armIdleTimer(id, at: rearm) }
    }

    /// The metadata of a connection's log lines: its pool key (origin and connect address) and id.
    private static func metadata(_ connection: HTTP1Connection) -> Logger.Metadata {
        ["courier.pool": "\(connection.key)", "courier.connection": "\(connection.id)"]
    }

    /// A failure's kind for a log line (never its message, which may name a file or an address).
    private static func errorType(_ error: any Error) -> String {
        (error as? CourierError).map { "\($0.kind)" } ?? "\(type(of: error))"
    }

    private func connect(_ id: ConnectionID, key: PoolKey, deadline: MonotonicInstant) async {
        let result: Result<HTTP1Connection, any Error>
        do {
            let (stream, setup) = try await connector.connect(key, deadline: deadline)
            let connection = HTTP1Connection(
                id: id, key: key, stream: stream, limits: configuration.parserLimits, readSize: configuration.readSize
            )
            connection.setup = (dns: setup.dns, connect: setup.connect, tls: setup.tls)
            logger.trace("connected", metadata: Self.metadata(connection).merging([
                "courier.dns": "\(setup.dns)", "courier.connect": "\(setup.connect)", "courier.tls": "\(setup.tls ?? .zero)",
            ]) { $1 })
            result = .success(connection)
        } catch {
            logger.trace("connect failed", metadata: ["courier.pool": "\(key)", "error.type": "\(ConnectionPool.errorType(error))"])
            result = .failure(error)
        }
        let effects = state.withLock { s -> [Effect] in
            guard s.machines[key] != nil else {
                if case .success(let c) = result { return [.close(c)] }
                return []
            }
            let action: ConnectionPoolStateMachine.Action
            let empty: Bool
            switch result {
            case .success(let connection):
                s.connections[id] = connection
                (action, empty) = Self.modify(&s.machines[key]!) { $0.connectionEstablished(id) }
            case .failure:
                (action, empty) = Self.modify(&s.machines[key]!) { $0.connectionFailed(id) }
            }
            var out = translate(action, key: key, machineIsEmpty: empty, in: &s)
            if s.onQuiet != nil { quietCheck(&s, into: &out) }
            // A failed connect fails the request it answered for with the real error.
            if case .failure(let error) = result {
                out = out.map {
                    if case .resume(let r, .failure(let e as CourierError)) = $0, e.kind == .connect { return .resume(r, .failure(error)) }
                    return $0
                }
            }
            return out
        }
        perform(effects)
    }
}
