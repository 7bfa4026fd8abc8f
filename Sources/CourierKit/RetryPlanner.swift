internal import CourierCore
internal import CourierTransport

/// Decides, for one request, whether a failed attempt is tried again and when: the route's conditions and
/// methods, the attempt limit, jittered back-off, a server's Retry-After and the total deadline. Pure: the
/// owner passes the current instant and the randomness, asks the service's retry budget when the answer is
/// ``Decision/retry(at:)``, and reports the budget's answer with ``budgetRefused()`` or ``budgetGranted()``.
struct RetryPlanner {
    enum Decision: Equatable {
        /// Try again at this instant (once the budget agrees).
        case retry(at: Deadline)
        /// The failure is final.
        case giveUp(Reason)
    }

    enum Reason: Equatable, CustomStringConvertible {
        case notRetryable
        case methodNotRetryable
        case attemptsExhausted
        case pastDeadline
        case budgetExhausted

        var description: String {
            switch self {
            case .notRetryable: return "the failure is not one the route retries"
            case .methodNotRetryable: return "the route does not retry this method"
            case .attemptsExhausted: return "no attempts left"
            case .pastDeadline: return "the next attempt would start after the total deadline"
            case .budgetExhausted: return "the service's retry budget is spent"
            }
        }
    }

    private enum State {
        case attempting
        /// A retry was proposed with this back-off; waiting for the budget's answer.
        case awaitingBudget(backoff: Duration)
        case finished
    }

    /// The route's retry policy's conditions and curve: what the planner reads of it, not the whole policy (whose
    /// copy costs a reference count per set and string in it, on every load).
    private let conditions: Set<RetryPolicy.Condition>
    private let backoff: BackoffPolicy
    private let maxAttempts: Int
    private let retriesAllowed: Bool
    private let deadline: Deadline
    private var state = State.attempting
    private var previousBackoff: Duration?
    /// Attempts counted against the limit (a 401 refresh retry is not one).
    private(set) var countedAttempts = 0
    /// Retries granted so far.
    private(set) var retries = 0

    init(retry: RetryPolicy, maxAttempts: Int, retriesAllowed: Bool, deadline: Deadline) {
        self.conditions = retry.conditions
        self.backoff = retry.backoff
        self.maxAttempts = max(1, maxAttempts)
        self.retriesAllowed = retriesAllowed
        self.deadline = deadline
    }

    /// An attempt starts; `counted` is false for the single retry after a 401 refresh.
    mutating func attemptStarted(counted: Bool = true) {
        if counted { countedAttempts += 1 }
        state = .attempting
    }

    /// An attempt failed with `condition` (nil for failures no policy can name); `wait` is what a Retry-After
    /// asked for, when the route respects it.
    mutating func decide(
        after condition: RetryPolicy.Condition?, wait: Duration?, now: Deadline,
        using random: inout some RandomNumberGenerator
    ) -> Decision {
        guard case .attempting = state else { return .giveUp(.notRetryable) }
        // A failure the route does not retry leaves the planner as it was: a streamed response whose status
        // was fine can still break off in its body, and that failure gets its own decision.
        guard let condition, conditions.contains(condition) else { return .giveUp(.notRetryable) }
        guard retriesAllowed else { return finish(.methodNotRetryable) }
        guard countedAttempts < maxAttempts else { return finish(.attemptsExhausted) }
        let backoff = self.backoff.delay(beforeRetry: retries + 1, previous: previousBackoff, using: &random)
        var at = now + backoff
        if let wait, now + wait > at { at = now + wait }
        guard at < deadline else { return finish(.pastDeadline) }
        state = .awaitingBudget(backoff: backoff)
        return .retry(at: at)
    }

    /// The budget allowed the proposed retry.
    mutating func budgetGranted() {
        guard case .awaitingBudget(let backoff) = state else { return }
        previousBackoff = backoff
        retries += 1
        state = .attempting
    }

    /// The budget refused the proposed retry: the failure is final, for this reason.
    mutating func budgetRefused() -> Reason {
        state = .finished
        return .budgetExhausted
    }

    private mutating func finish(_ reason: Reason) -> Decision {
        state = .finished
        return .giveUp(reason)
    }
}
