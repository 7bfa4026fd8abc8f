import CourierCore

/// The decisions of one load (one hop of a request) as a pure state machine: when to wait for the rate limit, to
/// authorise, to send; what a response or a failure leads to (a pause of the endpoint for Retry-After, one
/// credential refresh after a 401, a retry once the service's budget agrees, a redirect, the answer, or the
/// failure). Events in, actions out; no I/O and no clock reads (instants are parameters). ``RequestExecution``
/// performs every action through one switch.
///
/// It is also the seam the cache will take its place in: a lookup before the rate limit, a store and a
/// revalidation after the response.
struct LoadStateMachine {
    /// What the owner must do.
    enum Action: Equatable {
        /// Ask the rate limiter when this attempt may go, then say ``admitted(at:now:)``.
        case admit
        /// Wait until `until` for the rate limit, then say ``rateLimitWaited()``.
        case waitForRateLimit(until: ContinuousClock.Instant)
        /// Run the route's authoriser, then say ``authorised()``.
        case authorise
        /// Send attempt `attempt`, then say ``responseArrived(status:retryAfter:isRedirect:now:using:)`` or
        /// ``failed(condition:cancelled:reason:now:using:)``.
        case send(attempt: Int)
        /// The response asked for a pause (`requested`); `applied` is what the route respects (zero: ignored).
        case noteRetryAfter(requested: Duration, applied: Duration)
        /// Pause the endpoint key until `until` (a respected Retry-After).
        case pauseEndpoint(until: ContinuousClock.Instant)
        /// Drop this response, have the authoriser refresh its credentials (once), then say ``refreshed()``.
        case refreshCredentials
        /// Ask the service's retry budget for a retry at `at`, then say ``budget(granted:now:)``.
        case proposeRetry(at: ContinuousClock.Instant, reason: String)
        /// The failure or response is final for this reason (for the trace).
        case gaveUp(reason: String, why: RetryPlanner.Reason)
        /// Drop the response (if any), tell a stream's consumer, wait until `until`, then say ``retryWaited()``.
        case waitForRetry(until: ContinuousClock.Instant, reason: String)
        /// The response is a redirect to follow: the next hop is a load of its own.
        case followRedirect
        /// The response is the answer: deliver it (a streamed body that breaks off is a ``failed(condition:cancelled:reason:now:using:)``).
        case deliver
        /// The rate limit would hold the request past its deadline.
        case failRateLimitPastDeadline
        /// The last failure is final: throw it.
        case fail
    }

    private enum State {
        case admitting
        case waitingForRateLimit
        case authorising
        case sending
        case refreshing
        /// A retry is proposed; `outcome` is what follows if the budget refuses it.
        case awaitingBudget(at: ContinuousClock.Instant, reason: String, outcome: Action)
        case waitingForRetry
        /// The response was handed over (a streamed body may still break off and be retried).
        case delivering
        case finished
    }

    private var planner: RetryPlanner
    private let retry: RetryPolicy
    private let deadline: ContinuousClock.Instant
    private let hasAuthoriser: Bool
    private var state = State.admitting
    /// The attempt being made (1 for the first).
    private(set) var attempt = 0
    /// The Retry-After the last response asked for, capped (what the response reports).
    private(set) var retryAfter: Duration?
    private var hasRefreshed = false
    private var nextAttemptIsRefreshRetry = false

    init(retry: RetryPolicy, maxAttempts: Int, retriesAllowed: Bool, deadline: ContinuousClock.Instant, hasAuthoriser: Bool) {
        self.planner = RetryPlanner(retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline)
        self.retry = retry
        self.deadline = deadline
        self.hasAuthoriser = hasAuthoriser
    }

    // MARK: - Events

    /// The load begins (its first attempt).
    mutating func start() -> [Action] { beginAttempt() }

    /// The rate limiter admits the attempt at `at` (`now` being when it was asked).
    mutating func admitted(at: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [Action] {
        precondition(isIn(.admitting), "admitted(at:) outside admission")
        guard at > now else { return afterAdmission() }
        guard at < deadline else {
            state = .finished
            return [.failRateLimitPastDeadline]
        }
        state = .waitingForRateLimit
        return [.waitForRateLimit(until: at)]
    }

    /// The rate-limit wait is over.
    mutating func rateLimitWaited() -> [Action] {
        precondition(isIn(.waitingForRateLimit), "rateLimitWaited() without a wait")
        return afterAdmission()
    }

    /// The authoriser gave the attempt its credentials.
    mutating func authorised() -> [Action] {
        precondition(isIn(.authorising), "authorised() outside authorisation")
        return send()
    }

    /// A response head arrived: `status`, the Retry-After it asked for (nil: none or unreadable), and whether it
    /// is a redirect the loader would follow.
    mutating func responseArrived(
        status: Int, retryAfter requested: Duration?, isRedirect: Bool, now: ContinuousClock.Instant,
        using random: inout some RandomNumberGenerator
    ) -> [Action] {
        precondition(isIn(.sending), "responseArrived outside an attempt")
        var actions: [Action] = []
        var wait: Duration?
        if status >= 300, let requested {
            let capped = min(requested, retry.retryAfterCap)
            retryAfter = capped
            actions.append(.noteRetryAfter(requested: requested, applied: retry.respectRetryAfter ? capped : .zero))
            if retry.respectRetryAfter {
                actions.append(.pauseEndpoint(until: now + capped))
                wait = capped
            }
        }
        if status == 401, hasAuthoriser, !hasRefreshed {
            // One refresh (shared with the other requests that got a 401 meanwhile) and one more attempt, which
            // does not count against the attempt limit; a second 401 is the answer.
            hasRefreshed = true
            nextAttemptIsRefreshRetry = true
            state = .refreshing
            return actions + [.refreshCredentials]
        }
        let final: Action = isRedirect ? .followRedirect : .deliver
        return actions + decide(after: .status(status), wait: wait, reason: "status \(status)", otherwise: final, now: now, using: &random)
    }

    /// The attempt failed (or, after ``Action/deliver``, a streamed body broke off): `condition` is the error's
    /// retry condition, `cancelled` whether the caller is gone.
    mutating func failed(
        condition: RetryPolicy.Condition?, cancelled: Bool, reason: String, now: ContinuousClock.Instant,
        using random: inout some RandomNumberGenerator
    ) -> [Action] {
        precondition(isIn(.sending) || isIn(.delivering), "failed outside an attempt")
        guard !cancelled else {
            state = .finished
            return [.fail]
        }
        return decide(after: condition, wait: nil, reason: reason, otherwise: .fail, now: now, using: &random)
    }

    /// The service's retry budget answered the proposed retry.
    mutating func budget(granted: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard case .awaitingBudget(let at, let reason, let outcome) = state else {
            preconditionFailure("budget(granted:) without a proposal")
        }
        guard granted else {
            guard case .giveUp(let why) = planner.budgetRefused() else { preconditionFailure("a refused budget retries") }
            return [.gaveUp(reason: reason, why: why)] + settle(outcome)
        }
        planner.budgetGranted()
        state = .waitingForRetry
        return [.waitForRetry(until: at, reason: reason)]
    }

    /// The credentials were refreshed (or the refresh was someone else's and is over): the next attempt.
    mutating func refreshed() -> [Action] {
        precondition(isIn(.refreshing), "refreshed() without a refresh")
        return beginAttempt()
    }

    /// The back-off (or Retry-After) wait is over: the next attempt.
    mutating func retryWaited() -> [Action] {
        precondition(isIn(.waitingForRetry), "retryWaited() without a wait")
        return beginAttempt()
    }

    // MARK: - Steps

    private mutating func beginAttempt() -> [Action] {
        attempt += 1
        planner.attemptStarted(counted: !nextAttemptIsRefreshRetry)
        nextAttemptIsRefreshRetry = false
        state = .admitting
        return [.admit]
    }

    private mutating func afterAdmission() -> [Action] {
        guard hasAuthoriser else { return send() }
        state = .authorising
        return [.authorise]
    }

    private mutating func send() -> [Action] {
        state = .sending
        return [.send(attempt: attempt)]
    }

    /// The retry planner's answer for a failure or a response; `otherwise` is what happens when there is no retry.
    private mutating func decide(
        after condition: RetryPolicy.Condition?, wait: Duration?, reason: String, otherwise: Action,
        now: ContinuousClock.Instant, using random: inout some RandomNumberGenerator
    ) -> [Action] {
        switch planner.decide(after: condition, wait: wait, now: now, using: &random) {
        case .retry(let at):
            state = .awaitingBudget(at: at, reason: reason, outcome: otherwise)
            return [.proposeRetry(at: at, reason: reason)]
        case .giveUp(let why):
            let trace: [Action] = why == .notRetryable ? [] : [.gaveUp(reason: reason, why: why)]
            return trace + settle(otherwise)
        }
    }

    /// The final action for a response or failure that is not retried.
    private mutating func settle(_ outcome: Action) -> [Action] {
        state = outcome == .deliver ? .delivering : .finished
        return [outcome]
    }

    private func isIn(_ expected: State) -> Bool {
        switch (state, expected) {
        case (.admitting, .admitting), (.waitingForRateLimit, .waitingForRateLimit), (.authorising, .authorising),
            (.sending, .sending), (.refreshing, .refreshing), (.waitingForRetry, .waitingForRetry),
            (.delivering, .delivering), (.finished, .finished):
            return true
        default:
            return false
        }
    }
}
