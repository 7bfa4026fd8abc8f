package import CourierCore

/// Whether calls may use Redis now: the connection's life (connect, reconnect with capped exponential back-off)
/// and the circuit breaker in front of it, as one pure state machine. Events come in with `now` (and a random
/// fraction for jitter); actions go out; the owner (``RedisClient``) performs them.
///
/// - **Connected**: calls are sent on the connection.
/// - **Lost** (the server closed or reset it, or sent garbage): reconnect at once; calls made meanwhile wait for
///   that connection, each within its own deadline, so a Redis that restarts, or closes an idle connection, costs
///   a call nothing but the reconnect.
/// - **Hung** (a call's deadline passed on the connection): the breaker opens at once, and a probe (a new
///   connection, its set-up ending in `PING`, bounded by the connect timeout) starts at once. Calls fail fast
///   while it runs: nobody waits for a server that just proved slow.
/// - **Unreachable** (a connect or probe failed): the breaker is open; calls fail fast, with the last failure
///   in their error, until the next probe, the back-off curve's delay later (``reconnectBackoff``): 50 ms, 100 ms, 200 ms… capped at
///   1 s by default, so Courier is back on Redis within about a second of it returning.
/// - **Shut down**: every call fails.
package struct RedisConnectivityStateMachine: Sendable {
    /// The waits between failed attempts, as the policy language's retry curves are written: 50 ms doubling to a
    /// 1 s cap, with equal jitter (half the curve's delay, plus up to the other half at random), so a fleet does not
    /// reconnect in lock-step.
    package static let reconnectBackoff = BackoffPolicy(
        initial: .milliseconds(50), max: .seconds(1), multiplier: 2, jitter: .equal
    )

    /// The wait after `failures` consecutive failures (at least 1) on `backoff`'s curve, scaled by equal jitter:
    /// `jitter` in 0...1 (clamped) is the random fraction the owner drew, 1 the full delay.
    package static func delay(_ backoff: BackoffPolicy, afterFailures failures: Int, jitter: Double) -> Duration {
        backoff.baseDelay(beforeRetry: failures) * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }

    package enum State: Sendable, Equatable {
        /// No connection yet: the first call starts one.
        case idle
        /// A connection is being made. A probe's callers fail fast; a reconnect's wait.
        case connecting(generation: UInt64, probe: Bool)
        case connected(generation: UInt64)
        /// The breaker is open until `retryAt`, when a probe starts.
        case open(retryAt: Deadline)
        case shutDown
    }

    /// What a call does now.
    package enum RequestAction: Sendable, Equatable {
        /// Send on the connection of this generation.
        case send(generation: UInt64)
        /// A connection is being made: wait for it, within the call's deadline.
        case wait
        /// Start making connection `generation`, then wait for it.
        case connectAndWait(generation: UInt64)
        /// Fail now with this error, paying no timeout.
        case failFast(RedisError)
        /// The breaker's wait is over: start probe `generation`, and fail this call now.
        case probeAndFailFast(generation: UInt64, RedisError)
    }

    /// What the owner does after an event.
    package enum Action: Sendable, Equatable {
        case none
        /// Connection `generation` is ready: the waiting calls send on it.
        case resumeWaiters(generation: UInt64)
        /// Start making connection `generation` (a reconnect, or the breaker's probe).
        case connect(generation: UInt64)
        /// The attempt failed: fail the waiting calls with this error, and fire ``retryTimerFired(now:)`` at
        /// `retryAt`.
        case failWaiters(RedisError, retryAt: Deadline)
        /// Fire ``retryTimerFired(now:)`` at this instant.
        case scheduleRetry(at: Deadline)
        /// A connection that finished after the client moved on (shut down, or a newer generation): close it.
        case closeConnection
        /// Shut down: close the connection, fail the waiting calls with this error.
        case shutDown(RedisError)
    }

    package private(set) var state: State = .idle
    /// Attempts that failed since the last success.
    package private(set) var consecutiveFailures = 0
    private var lastFailure: RedisError?
    private var generation: UInt64 = 0
    private let backoff: BackoffPolicy
    private let backend: String

    package init(backoff: BackoffPolicy = reconnectBackoff, backend: String) {
        self.backoff = backoff
        self.backend = backend
    }

    /// A call wants to send.
    package mutating func request(now: Deadline) -> RequestAction {
        switch state {
        case .connected(let current):
            return .send(generation: current)
        case .idle:
            generation += 1
            state = .connecting(generation: generation, probe: false)
            return .connectAndWait(generation: generation)
        case .connecting(_, probe: false):
            return .wait
        case .connecting(_, probe: true):
            return .failFast(fastFailure(probing: true, now: now))
        case .open(let retryAt):
            guard now >= retryAt else { return .failFast(fastFailure(probing: false, now: now)) }
            generation += 1
            state = .connecting(generation: generation, probe: true)
            return .probeAndFailFast(generation: generation, fastFailure(probing: true, now: now))
        case .shutDown:
            return .failFast(RedisError(.shutdown, "the client was shut down", backend: backend))
        }
    }

    /// Connection `generation` is set up (connected, authenticated, database selected, `PING` answered).
    package mutating func connectSucceeded(generation attempt: UInt64, now: Deadline) -> Action {
        guard case .connecting(let current, _) = state, current == attempt else { return .closeConnection }
        state = .connected(generation: attempt)
        consecutiveFailures = 0
        lastFailure = nil
        return .resumeWaiters(generation: attempt)
    }

    /// Making connection `generation` failed with `error`; `jitter` is a random fraction in 0...1.
    package mutating func connectFailed(generation attempt: UInt64, error: RedisError, now: Deadline, jitter: Double) -> Action {
        guard case .connecting(let current, _) = state, current == attempt else { return .none }
        consecutiveFailures += 1
        lastFailure = error
        let retryAt = now + Self.delay(backoff, afterFailures: consecutiveFailures, jitter: jitter)
        state = .open(retryAt: retryAt)
        return .failWaiters(error, retryAt: retryAt)
    }

    /// Connection `generation`, once set up, failed: `error` says how (a ``RedisError/Kind-swift.enum/timeout``
    /// means the server hung; anything else that it was lost).
    package mutating func connectionFailed(generation failed: UInt64, error: RedisError, now: Deadline) -> Action {
        guard case .connected(let current) = state, current == failed else { return .none }
        generation += 1
        let hung = error.kind == .timeout
        if hung {
            consecutiveFailures += 1
            lastFailure = error
        }
        state = .connecting(generation: generation, probe: hung)
        return .connect(generation: generation)
    }

    /// The timer of a ``Action/failWaiters(_:retryAt:)`` or ``Action/scheduleRetry(at:)`` fired.
    package mutating func retryTimerFired(now: Deadline) -> Action {
        guard case .open(let retryAt) = state else { return .none }
        guard now >= retryAt else { return .scheduleRetry(at: retryAt) }
        generation += 1
        state = .connecting(generation: generation, probe: true)
        return .connect(generation: generation)
    }

    /// The client shuts down.
    package mutating func shutdown() -> Action {
        guard state != .shutDown else { return .none }
        state = .shutDown
        return .shutDown(RedisError(.shutdown, "the client was shut down", backend: backend))
    }

    /// The error of a call refused while the breaker is open or probing: the last failure's kind where it says
    /// something a retry will not fix (credentials, TLS, configuration), else `unavailable`; the last failure's
    /// message in it either way.
    private func fastFailure(probing: Bool, now: Deadline) -> RedisError {
        let cause = lastFailure.map { "\($0.kind.rawValue): \($0.message)" } ?? "the connection failed"
        let kind: RedisError.Kind
        switch lastFailure?.kind {
        case .authentication?, .tls?, .configuration?: kind = lastFailure!.kind
        default: kind = .unavailable
        }
        let when: String
        if probing {
            when = "a probe is under way"
        } else if case .open(let retryAt) = state {
            when = "next probe in \((retryAt - now).nanosecondsClamped / 1_000_000) ms"
        } else {
            when = "waiting"
        }
        return RedisError(kind, "not tried: the circuit is open after \(consecutiveFailures) failure(s), \(when); last: \(cause)", backend: backend)
    }
}
