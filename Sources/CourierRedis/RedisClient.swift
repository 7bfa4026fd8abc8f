package import CourierCore
package import CourierPosix
internal import CourierTLS
internal import Synchronization

/// A Redis client on one pipelined connection, with reconnection and a circuit breaker.
///
/// Any number of tasks may call at once: their commands share the connection, go out in the order they are
/// made, and each gets its own reply (``RedisPipelineStateMachine``). Every call has a deadline (the
/// configuration's `commandTimeout` unless it gives one) and fails with ``RedisError/Kind-swift.enum/timeout``
/// when it passes; the connection is then closed. Whether a call may use Redis at all is decided by
/// ``RedisConnectivityStateMachine``: while Redis is down or hung calls fail fast with
/// ``RedisError/Kind-swift.enum/unavailable`` (no timeout paid) until a probe connects again. Call
/// ``shutdown()`` before releasing the client.
package final class RedisClient: Sendable {
    private typealias Waiter = CheckedContinuation<Result<RedisConnection, RedisError>, Never>

    private struct State: ~Copyable {
        var machine: RedisConnectivityStateMachine
        var connection: RedisConnection?
        /// Calls waiting for a connection being made, each with the timer of its deadline.
        var waiters: [UInt64: (continuation: Waiter, timer: TimerID)] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
        var retryTimer: TimerID?
        var tls: TLSContext?
    }

    package let configuration: RedisConfiguration
    private let loop: EventLoop
    private let state: Mutex<State>

    /// A client for `configuration`'s server, on one of `loops`. It connects on the first call.
    package init(configuration: RedisConfiguration, loops: EventLoopGroup = .shared) {
        self.configuration = configuration
        self.loop = loops.next()
        self.state = Mutex(State(machine: RedisConnectivityStateMachine(backoff: configuration.reconnect, backend: configuration.url.endpoint)))
    }

    /// `host:port`, as errors name it.
    package var backend: String { configuration.url.endpoint }

    /// The connectivity machine's state (for tests and diagnostics).
    package var connectivity: RedisConnectivityStateMachine.State { state.withLock { $0.machine.state } }

    /// Sends `command` and returns its reply, by `deadline` (default: now + the configuration's command timeout).
    ///
    /// - Throws: ``RedisError``: an error reply is ``RedisError/Kind-swift.enum/server`` (the connection stays
    ///   usable); see ``RedisError/Kind-swift.enum`` for the rest.
    package func send(_ command: RedisCommand, deadline: Deadline? = nil) async throws(RedisError) -> RESPValue {
        let deadline = deadline ?? .now() + configuration.commandTimeout
        let connection = try await connection(by: deadline)
        return try await connection.send(command, deadline: deadline)
    }

    /// Runs `script` with `EVALSHA`, and with `EVAL` (which caches it again) when Redis answers `NOSCRIPT`;
    /// both within the one deadline.
    package func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]] = [], deadline: Deadline? = nil) async throws(RedisError) -> RESPValue {
        let deadline = deadline ?? .now() + configuration.commandTimeout
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments
        do {
            return try await send(RedisCommand("EVALSHA", arguments: [Array(script.sha1.utf8)] + tail), deadline: deadline)
        } catch where error.serverCode == "NOSCRIPT" {
            return try await send(RedisCommand("EVAL", arguments: [Array(script.source.utf8)] + tail), deadline: deadline)
        }
    }

    /// Closes the connection and fails every call, now and later, with ``RedisError/Kind-swift.enum/shutdown``.
    package func shutdown() {
        let (action, connection, waiters, retry) = state.withLock { state in
            let action = state.machine.shutdown()
            defer {
                state.connection = nil
                state.waiters = [:]
                state.retryTimer = nil
            }
            return (action, state.connection, Array(state.waiters.values), state.retryTimer)
        }
        guard case .shutDown(let error) = action else { return }
        if let retry { loop.cancelTimer(retry) }
        connection?.close()
        for waiter in waiters {
            loop.cancelTimer(waiter.timer)
            waiter.continuation.resume(returning: .failure(error))
        }
    }

    // MARK: - Connections

    /// The connection to send on, waiting (by `deadline`) while one is being made, or the breaker's error.
    private func connection(by deadline: Deadline) async throws(RedisError) -> RedisConnection {
        // The common case, a connection up and not failing: no continuation, no suspension. (The machine's
        // `request` answers `send` in this state and changes nothing.)
        let ready = state.withLock { state -> RedisConnection? in
            guard case .connected = state.machine.state, let connection = state.connection, connection.ending == nil else { return nil }
            return connection
        }
        if let ready { return ready }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                request(id, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            let waiter = state.withLock { state -> (continuation: Waiter, timer: TimerID)? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return waiter
            }
            guard let waiter else { return }
            loop.cancelTimer(waiter.timer)
            waiter.continuation.resume(returning: .failure(RedisError(.cancelled, "the call was cancelled while waiting for a connection", backend: backend)))
        }
        return try result.get()
    }

    private func request(_ id: UInt64, deadline: Deadline, continuation: Waiter) {
        // What to resume the caller with now (nil: it waits), and which connection to start making.
        let (result, connect) = state.withLock { state -> (Result<RedisConnection, RedisError>?, UInt64?) in
            if state.cancelledEarly.remove(id) != nil {
                return (.failure(RedisError(.cancelled, "the call was cancelled", backend: backend)), nil)
            }
            var action = state.machine.request(now: .now())
            var reconnect: UInt64?
            if case .send(let generation) = action, let ending = state.connection?.ending {
                // The connection failed and its report is still on its way: act on it now, then ask again.
                if case .connect(let next) = state.machine.connectionFailed(generation: generation, error: ending, now: .now()) {
                    reconnect = next
                    state.connection = nil
                }
                action = state.machine.request(now: .now())
            }
            switch action {
            case .send:
                guard let connection = state.connection else { return (.failure(RedisError(.unavailable, "no connection", backend: backend)), reconnect) }
                return (.success(connection), reconnect)
            case .failFast(let error):
                return (.failure(error), reconnect)
            case .probeAndFailFast(let generation, let error):
                return (.failure(error), generation)
            case .wait, .connectAndWait:
                let timer = loop.scheduleTimer(at: deadline) { [weak self] in self?.waiterTimedOut(id) }
                state.waiters[id] = (continuation, timer)
                if case .connectAndWait(let generation) = action { return (nil, generation) }
                return (nil, reconnect)
            }
        }
        if let connect { self.connect(connect) }
        if let result { continuation.resume(returning: result) }
    }

    private func waiterTimedOut(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: .failure(
            RedisError(.timeout, "no connection was ready within the call's deadline", backend: backend)
        ))
    }

    /// Makes connection `generation` in a task of its own, and tells the machine how it went.
    private func connect(_ generation: UInt64) {
        Task {
            let outcome: Result<RedisConnection, RedisError>
            do throws(RedisError) {
                let tls = try await tlsContext()
                let connection = try await RedisConnection.open(
                    configuration, tls: tls, generation: generation, loop: loop,
                    deadline: .now() + configuration.connectTimeout
                ) { [weak self] error in self?.connectionFailed(generation, error) }
                outcome = .success(connection)
            } catch {
                outcome = .failure(error)
            }
            connectFinished(generation, outcome)
        }
    }

    private func connectFinished(_ generation: UInt64, _ outcome: Result<RedisConnection, RedisError>) {
        let (action, waiters) = state.withLock { state -> (RedisConnectivityStateMachine.Action, [(continuation: Waiter, timer: TimerID)]) in
            let action: RedisConnectivityStateMachine.Action
            switch outcome {
            case .success(let connection) where connection.ending != nil:
                // It failed between its set-up and now, and its report found the machine still connecting.
                let error = connection.ending!
                action = state.machine.connectFailed(generation: generation, error: error, now: .now(), jitter: Double.random(in: 0...1))
            case .success(let connection):
                action = state.machine.connectSucceeded(generation: generation, now: .now())
                if case .resumeWaiters = action { state.connection = connection }
            case .failure(let error):
                action = state.machine.connectFailed(generation: generation, error: error, now: .now(), jitter: Double.random(in: 0...1))
            }
            if case .failWaiters(_, let retryAt) = action {
                state.retryTimer = loop.scheduleTimer(at: retryAt) { [weak self] in self?.retryTimerFired() }
            }
            switch action {
            case .resumeWaiters, .failWaiters:
                defer { state.waiters = [:] }
                return (action, Array(state.waiters.values))
            default:
                return (action, [])
            }
        }
        for waiter in waiters { loop.cancelTimer(waiter.timer) }
        switch action {
        case .resumeWaiters:
            guard case .success(let connection) = outcome else { return }
            for waiter in waiters { waiter.continuation.resume(returning: .success(connection)) }
        case .failWaiters(let error, _):
            for waiter in waiters { waiter.continuation.resume(returning: .failure(error)) }
        case .closeConnection:
            if case .success(let connection) = outcome { connection.close() }
        default:
            break
        }
    }

    /// The connection of `generation` failed after it was set up.
    private func connectionFailed(_ generation: UInt64, _ error: RedisError) {
        let action = state.withLock { state -> RedisConnectivityStateMachine.Action in
            let action = state.machine.connectionFailed(generation: generation, error: error, now: .now())
            if case .connect = action { state.connection = nil }
            return action
        }
        if case .connect(let next) = action { connect(next) }
    }

    private func retryTimerFired() {
        let action = state.withLock { state -> RedisConnectivityStateMachine.Action in
            state.retryTimer = nil
            let action = state.machine.retryTimerFired(now: .now())
            if case .scheduleRetry(let at) = action {
                state.retryTimer = loop.scheduleTimer(at: at) { [weak self] in self?.retryTimerFired() }
            }
            return action
        }
        if case .connect(let generation) = action { connect(generation) }
    }

    /// The TLS context for `rediss://`, made on first use on a thread of its own (reading a trust store takes
    /// OpenSSL a tenth of a second or more of CPU); nil for `redis://`.
    private func tlsContext() async throws(RedisError) -> TLSContext? {
        guard configuration.url.usesTLS else { return nil }
        if let context = state.withLock({ $0.tls }) { return context }
        let policy = configuration.tls
        do {
            let made = try await ThreadOfItsOwn.run(name: "courier-redis-tls") { () throws(TLSError) -> TLSContext in
                try TLSContext(policy: policy)
            }
            return state.withLock { state in
                if let existing = state.tls { return existing }
                state.tls = made
                return made
            }
        } catch {
            throw RedisError.classify(error, during: "loading the TLS settings", backend: backend)
        }
    }
}
