import CourierCore

/// The decisions of one load (one hop of a request) as a pure state machine: when to wait for the rate limit, to
/// authorise, to send; what a response or a failure leads to (a pause of the endpoint for Retry-After, one
/// credential refresh after a 401, a retry once the service's budget agrees, a redirect, the answer, or the
/// failure). Events in, actions out; no I/O and no clock reads (instants are parameters). ``RequestExecution``
/// performs every action through one switch.
///
/// The HTTP cache is one stage of it (RFC 9111, decided by `CourierHTTPCache`'s rules, which the owner applies
/// to what it finds): a lookup before the rate limit, which may answer at once (fresh, or stale where allowed)
/// or make the request conditional; after the response, a 304 freshens the stored response, a storable one is
/// stored, an unsafe method's invalidates; when the origin fails, a stored response inside its
/// `stale-if-error` window answers instead; an offline load answers only from the cache.
struct LoadStateMachine {
    /// How the cache takes part in a load.
    enum CacheRole: Equatable {
        /// Not at all: no cache, or a method the cache neither answers nor invalidates.
        case none
        /// A `GET` or `HEAD`: look up first, store (or freshen from `HEAD`) after. `forceRevalidation`: a
        /// background revalidation, which never answers from the cache; `onlyIfCached`: the request's
        /// `only-if-cached`, answered 504 when nothing usable is stored.
        case lookUp(forceRevalidation: Bool, onlyIfCached: Bool)
        /// An unsafe method: its response invalidates the stored responses of the URL.
        case invalidate
    }

    /// What the owner found in the cache, judged by the RFC 9111 rules at lookup time.
    struct CacheFinding: Equatable {
        var decision: ReuseDecision
        var isFresh: Bool
        /// Whether the response may be served if the origin fails (`stale-if-error`, or fresh).
        var staleIfError: Bool
        /// Whether an offline load may serve it (fresh, or stale without `must-revalidate` or `no-cache`).
        var servableOffline: Bool
        /// Whether it has a validator (`ETag`, `Last-Modified`) to revalidate with.
        var hasValidators: Bool
    }

    /// How a stored response answers.
    enum StoredAnswer: Equatable {
        case hit
        case stale(CacheEvent.StaleReason)
        case revalidated
    }

    /// What the owner must do.
    enum Action: Equatable {
        /// Look the request up in the cache, then say ``cacheLookedUp(_:)``.
        case lookUpCache
        /// Nothing usable is stored: the request goes to the origin (for the trace).
        case cacheMiss
        /// Make the request conditional on the stored response's validators (`If-None-Match`,
        /// `If-Modified-Since`).
        case revalidate
        /// Answer with the stored response, as `answer`.
        case deliverStored(StoredAnswer)
        /// Revalidate the stored response in the background (`stale-while-revalidate`), with a load of its own.
        case revalidateInBackground
        /// The origin answered the conditional request with 304: drop its body, freshen the stored response,
        /// then say ``freshened(matched:)``.
        case freshenStored
        /// The 304 did not match the stored response: the next attempt goes without the conditions.
        case dropConditions
        /// Store the response (when RFC 9111 allows) once its body has been read; from a `HEAD`, freshen the
        /// stored `GET` response instead.
        case storeResponse
        /// Invalidate the stored responses of the URL (an unsafe method's response).
        case invalidateStored
        /// The loader is offline and nothing stored answers: fail with `offline`.
        case failOffline
        /// `only-if-cached` and nothing usable is stored: answer 504 (RFC 9111 §5.2.1.7).
        case answerUnsatisfiable
        /// Ask the rate limiter when this attempt may go, then say ``admitted(at:now:)``.
        case admit
        /// Wait until `until` for the rate limit, then say ``rateLimitWaited()``.
        case waitForRateLimit(until: ContinuousInstant)
        /// Run the route's authoriser, then say ``authorised()``.
        case authorise
        /// Send attempt `attempt`, then say ``responseArrived(status:retryAfter:isRedirect:now:using:)`` or
        /// ``failed(condition:cancelled:reason:now:using:)``.
        case send(attempt: Int)
        /// The response asked for a pause (`requested`); `applied` is what the route respects (zero: ignored).
        case noteRetryAfter(requested: Duration, applied: Duration)
        /// Pause the endpoint key until `until` (a respected Retry-After).
        case pauseEndpoint(until: ContinuousInstant)
        /// Drop this response, have the authoriser refresh its credentials (once), then say ``refreshed()``.
        case refreshCredentials
        /// Ask the service's retry budget for a retry at `at`, then say ``budget(granted:now:)``.
        case proposeRetry(at: ContinuousInstant, reason: String)
        /// The failure or response is final for this reason (for the trace).
        case gaveUp(reason: String, why: RetryPlanner.Reason)
        /// Drop the response (if any), tell a stream's consumer, wait until `until`, then say ``retryWaited()``.
        case waitForRetry(until: ContinuousInstant, reason: String)
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
        case lookingUp
        case freshening
        case admitting
        case waitingForRateLimit
        case authorising
        case sending
        case refreshing
        /// A retry is proposed; `outcome` is what follows if the budget refuses it.
        case awaitingBudget(at: ContinuousInstant, reason: String, outcome: Action)
        case waitingForRetry
        /// The response was handed over (a streamed body may still break off and be retried).
        case delivering
        case finished
    }

    private var planner: RetryPlanner
    /// The route's Retry-After rules (the rest of its retry policy is the planner's).
    private let retryAfterCap: Duration
    private let respectsRetryAfter: Bool
    private let deadline: ContinuousInstant
    private let hasAuthoriser: Bool
    private var state = State.admitting
    /// The attempt being made (1 for the first).
    private(set) var attempt = 0
    /// The Retry-After the last response asked for, capped (what the response reports).
    private(set) var retryAfter: Duration?
    private var hasRefreshed = false
    /// The next attempt does not count against the attempt limit (after a refresh, or a 304 that did not match).
    private var nextAttemptIsFree = false
    private let cacheRole: CacheRole
    private let offline: Bool
    /// The stored response found, if any.
    private var finding: CacheFinding?
    /// Whether the current request is conditional on the stored response.
    private var revalidating = false
    /// The last response's status and the last failure's kind (what `stale-if-error` looks at).
    private var lastStatus: Int?
    private var lastFailure: CourierError.Kind?

    init(
        retry: RetryPolicy, maxAttempts: Int, retriesAllowed: Bool, deadline: ContinuousInstant, hasAuthoriser: Bool,
        cache: CacheRole = .none, offline: Bool = false
    ) {
        self.planner = RetryPlanner(retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline)
        self.retryAfterCap = retry.retryAfterCap
        self.respectsRetryAfter = retry.respectRetryAfter
        self.deadline = deadline
        self.hasAuthoriser = hasAuthoriser
        self.cacheRole = cache
        self.offline = offline
    }

    // MARK: - Events

    /// The load begins: with the cache lookup, or its first attempt (or, offline without a cache, its failure).
    mutating func start() -> [Action] {
        if case .lookUp = cacheRole {
            state = .lookingUp
            return [.lookUpCache]
        }
        guard !offline else {
            state = .finished
            return [.failOffline]
        }
        return beginAttempt()
    }

    /// The cache lookup found `finding` (nil: nothing stored for this request, or the cache failed).
    mutating func cacheLookedUp(_ finding: CacheFinding?) -> [Action] {
        precondition(isIn(.lookingUp), "cacheLookedUp outside the lookup")
        guard case .lookUp(let forceRevalidation, let onlyIfCached) = cacheRole else { preconditionFailure("no lookup role") }
        self.finding = finding
        if offline {
            state = .finished
            guard let finding, finding.servableOffline else { return [.failOffline] }
            return [.deliverStored(finding.isFresh ? .hit : .stale(.offline))]
        }
        guard let finding else {
            guard !onlyIfCached else {
                state = .finished
                return [.answerUnsatisfiable]
            }
            return [.cacheMiss] + beginAttempt()
        }
        let decision = forceRevalidation ? .revalidate : finding.decision
        switch decision {
        case .fresh:
            state = .finished
            return [.deliverStored(.hit)]
        case .staleAccepted:
            state = .finished
            return [.deliverStored(.stale(.maxStale))]
        case .staleWhileRevalidate:
            state = .finished
            return [.revalidateInBackground, .deliverStored(.stale(.staleWhileRevalidate))]
        case .unsatisfiable:
            state = .finished
            return [.answerUnsatisfiable]
        case .revalidate:
            // Without a validator the stored response cannot be revalidated: the request goes as it is (and the
            // stored response may still answer if the origin fails, within its stale-if-error window).
            guard finding.hasValidators else { return [.cacheMiss] + beginAttempt() }
            revalidating = true
            return [.revalidate] + beginAttempt()
        }
    }

    /// The stored response was freshened from the 304 (`matched`), or the 304 did not match it.
    mutating func freshened(matched: Bool) -> [Action] {
        precondition(isIn(.freshening), "freshened(matched:) without a 304")
        guard matched else {
            // RFC 9111 §4.3.4: a 304 that selects no stored response; ask again without the conditions, an
            // attempt the limit does not count.
            revalidating = false
            nextAttemptIsFree = true
            return [.dropConditions] + beginAttempt()
        }
        state = .finished
        return [.deliverStored(.revalidated)]
    }

    /// The rate limiter admits the attempt at `at` (`now` being when it was asked).
    mutating func admitted(at: ContinuousInstant, now: ContinuousInstant) -> [Action] {
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
        status: Int, retryAfter requested: Duration?, isRedirect: Bool, now: ContinuousInstant,
        using random: inout some RandomNumberGenerator
    ) -> [Action] {
        precondition(isIn(.sending), "responseArrived outside an attempt")
        lastStatus = status
        lastFailure = nil
        if status == 304, revalidating {
            state = .freshening
            return [.freshenStored]
        }
        var actions: [Action] = []
        var wait: Duration?
        if status >= 300, let requested {
            let capped = min(requested, retryAfterCap)
            retryAfter = capped
            actions.append(.noteRetryAfter(requested: requested, applied: respectsRetryAfter ? capped : .zero))
            if respectsRetryAfter {
                actions.append(.pauseEndpoint(until: now + capped))
                wait = capped
            }
        }
        if status == 401, hasAuthoriser, !hasRefreshed {
            // One refresh (shared with the other requests that got a 401 meanwhile) and one more attempt, which
            // does not count against the attempt limit; a second 401 is the answer.
            hasRefreshed = true
            nextAttemptIsFree = true
            state = .refreshing
            return actions + [.refreshCredentials]
        }
        let final: Action = isRedirect ? .followRedirect : .deliver
        // The reason is made only when a retry or a give-up is traced; most responses are final.
        let decided = decide(after: .status(status), wait: wait, reason: "status \(status)", otherwise: final, now: now, using: &random)
        return actions.isEmpty ? decided : actions + decided
    }

    /// The attempt failed (or, after ``Action/deliver``, a streamed body broke off): `condition` is the error's
    /// retry condition, `cancelled` whether the caller is gone.
    mutating func failed(
        condition: RetryPolicy.Condition?, kind: CourierError.Kind, cancelled: Bool, reason: String,
        now: ContinuousInstant, using random: inout some RandomNumberGenerator
    ) -> [Action] {
        precondition(isIn(.sending) || isIn(.delivering), "failed outside an attempt")
        // A body that broke off after its head was handed over cannot be replaced by a stored response.
        if isIn(.delivering) { finding = nil }
        lastStatus = nil
        lastFailure = kind
        guard !cancelled else {
            state = .finished
            return [.fail]
        }
        return decide(after: condition, wait: nil, reason: reason, otherwise: .fail, now: now, using: &random)
    }

    /// The service's retry budget answered the proposed retry.
    mutating func budget(granted: Bool, now: ContinuousInstant) -> [Action] {
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
        planner.attemptStarted(counted: !nextAttemptIsFree)
        nextAttemptIsFree = false
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
        after condition: RetryPolicy.Condition?, wait: Duration?, reason: @autoclosure () -> String, otherwise: Action,
        now: ContinuousInstant, using random: inout some RandomNumberGenerator
    ) -> [Action] {
        switch planner.decide(after: condition, wait: wait, now: now, using: &random) {
        case .retry(let at):
            let reason = reason()
            state = .awaitingBudget(at: at, reason: reason, outcome: otherwise)
            return [.proposeRetry(at: at, reason: reason)]
        case .giveUp(let why):
            if why == .notRetryable { return settle(otherwise) }
            return [.gaveUp(reason: reason(), why: why)] + settle(otherwise)
        }
    }

    /// The final action for a response or failure that is not retried, with the cache's part in it.
    private mutating func settle(_ outcome: Action) -> [Action] {
        if let stale = staleAnswer(for: outcome) {
            state = .finished
            return [.deliverStored(.stale(stale))]
        }
        state = outcome == .deliver ? .delivering : .finished
        switch (cacheRole, outcome) {
        case (.lookUp, .deliver): return [.storeResponse, outcome]
        case (.invalidate, .deliver), (.invalidate, .followRedirect): return [.invalidateStored, outcome]
        default: return [outcome]
        }
    }

    /// Why a stored response answers instead of `outcome`, if it does: the origin failed (no response, or a 500,
    /// 502, 503 or 504) and the stored response may be served on error (RFC 5861 §4; never under
    /// `must-revalidate` or `no-cache`, which the finding's `staleIfError` already reflects).
    private func staleAnswer(for outcome: Action) -> CacheEvent.StaleReason? {
        guard let finding, finding.staleIfError else { return nil }
        switch outcome {
        case .deliver:
            guard let status = lastStatus, [500, 502, 503, 504].contains(status) else { return nil }
            return .originFailed(error: .httpStatus)
        case .fail:
            guard let kind = lastFailure, ![.cancelled, .policy, .authorisation].contains(kind) else { return nil }
            return .originFailed(error: kind)
        default:
            return nil
        }
    }

    private func isIn(_ expected: State) -> Bool {
        switch (state, expected) {
        case (.lookingUp, .lookingUp), (.freshening, .freshening), (.admitting, .admitting), (.waitingForRateLimit, .waitingForRateLimit), (.authorising, .authorising),
            (.sending, .sending), (.refreshing, .refreshing), (.waitingForRetry, .waitingForRetry),
            (.delivering, .delivering), (.finished, .finished):
            return true
        default:
            return false
        }
    }
}
