internal import CourierCore
internal import CourierHTTPCache

/// The decisions of one load (one hop of a request) as a pure state machine: when to wait for the rate limit, to
/// authorise, to send; what a response or a failure leads to (a pause of the endpoint for Retry-After, one
/// credential refresh after a 401, a retry once the service's budget agrees, a redirect, the answer, or the
/// failure). Events in, actions out; no I/O and no clock reads (instants are parameters). ``LoadHop`` performs
/// every action through one switch.
///
/// Actions carry what their owner needs to perform them: the response to deliver, discard, freshen a stored
/// response from or invalidate with, the stored response to answer with or revalidate, the redirect's next
/// request, the failure to throw. The machine holds them between events, so its owner keeps no state beside it
/// and guards none. They are generic, opaque payloads (`Answer`: a response whose body is still to be read;
/// `Stored`: a cache lookup's stored response; `Hop`: a redirect's next request; `Failure`: an error), so that
/// tests drive the machine with plain values.
///
/// The events are never inlined into their owner: the owner is an async function, whose frame would hold every
/// temporary of every event inlined into it (the hop's frame was kilobytes per load in flight).
///
/// The HTTP cache is one stage of it (RFC 9111, decided by `CourierHTTPCache`'s rules, which the owner applies
/// to what it finds): a lookup before the rate limit, which may answer at once (fresh, or stale where allowed)
/// or make the request conditional; after the response, a 304 freshens the stored response, a storable one is
/// stored, an unsafe method's invalidates; when the origin fails, a stored response inside its
/// `stale-if-error` window answers instead; an offline load answers only from the cache.
struct LoadStateMachine<Answer, Stored, Hop, Failure> {
    typealias CacheRole = LoadCacheRole
    typealias CacheFinding = LoadCacheFinding
    typealias StoredAnswer = LoadStoredAnswer
    typealias Actions = LoadActions<Action>

    /// What the owner must do.
    enum Action {
        /// Look the request up in the cache, then say ``cacheLookedUp(_:)``.
        case lookUpCache
        /// Nothing usable is stored: the request goes to the origin (for the trace).
        case cacheMiss
        /// Make the request conditional on this stored response's validators (`If-None-Match`,
        /// `If-Modified-Since`).
        case revalidate(Stored)
        /// Answer with this stored response, as `answer`.
        case deliverStored(Stored, StoredAnswer)
        /// Revalidate this stored response in the background (`stale-while-revalidate`), with a load of its own.
        case revalidateInBackground(Stored)
        /// The origin answered the conditional request with 304 (`notModified`, whose body is to be dropped):
        /// freshen the stored response, then say ``freshened(_:)``.
        case freshenStored(Stored, notModified: Answer)
        /// The 304 did not match the stored response: the next attempt goes without the conditions.
        case dropConditions
        /// Invalidate the stored responses of the URL (an unsafe method's response).
        case invalidateStored(Answer)
        /// The loader is offline and nothing stored answers: fail with `offline`.
        case failOffline
        /// `only-if-cached` and nothing usable is stored: answer 504 (RFC 9111 §5.2.1.7).
        case answerUnsatisfiable
        /// Ask the rate limiter when this attempt may go, then say ``admitted(at:now:)``.
        case admit
        /// Wait until `until` for the rate limit, then say ``rateLimitWaited()``.
        case waitForRateLimit(until: Deadline)
        /// Run the route's authoriser, then say ``authorised()``.
        case authorise
        /// Send attempt `attempt`, then say ``responseArrived(_:status:retryAfter:redirect:now:using:)`` or
        /// ``failed(_:condition:kind:cancelled:handedOver:reason:now:using:)``.
        case send(attempt: Int)
        /// The response asked for a pause (`requested`); `applied` is what the route respects (zero: ignored).
        case noteRetryAfter(requested: Duration, applied: Duration)
        /// Pause the endpoint key until `until` (a respected Retry-After).
        case pauseEndpoint(until: Deadline)
        /// Read and drop this response's body: it is not the answer (a retried status, a 401, a redirect, a 5xx a
        /// stored response answers instead of).
        case discard(Answer)
        /// Have the authoriser refresh its credentials (once), then say ``refreshed()``.
        case refreshCredentials
        /// Ask the service's retry budget for a retry at `at`, then say ``budget(granted:now:)``.
        case proposeRetry(at: Deadline, reason: String)
        /// The failure or response is final for this reason (for the trace).
        case gaveUp(reason: String, why: RetryPlanner.Reason)
        /// Tell a stream's consumer (unless `announce` is false: the attempt asks for the rest of a body that broke
        /// off, and the consumer learns what became of it from its answer), wait until `until`, then say
        /// ``retryWaited()``.
        case waitForRetry(until: Deadline, reason: String, announce: Bool = true)
        /// The next attempts send `range`'s `Range` and `If-Range` fields (nil: none, the whole body is asked for).
        indirect case askForRange(ResumeRange?)
        /// The attempt's answer is not the rest of a body that broke off: tell a stream's consumer that attempt
        /// `attempt` starts the body again (`reason`), before its head.
        case announceRestart(attempt: Int, reason: String)
        /// The answer (a `206`) continues the body of `head`'s response from byte `from`: tell a stream's consumer
        /// it resumes (the body broke off for `reason`), deliver the rest of the body with no head of its own, and
        /// answer with `head`'s head.
        indirect case continueBody(Answer, head: Answer, from: Int64, reason: String)
        /// The answer to a range request is a `206` that cannot continue the body (`why`): a protocol error.
        indirect case failResume(Answer, why: String)
        /// The response was a redirect to follow: the next hop (`Hop`) is a load of its own. Indirect, as ``fail(_:)``:
        /// an action is as large as its largest payload, and actions are moved on every event; the rare large
        /// payloads are boxed.
        indirect case followRedirect(Hop)
        /// This response is the answer: read its body and deliver it (a streamed body that breaks off is a
        /// ``failed(_:condition:kind:cancelled:handedOver:reason:now:using:)``); `store`: store it in the cache
        /// once read, where RFC 9111 allows (from a `HEAD`, freshen `stored`, the stored `GET` response found,
        /// instead).
        case deliver(Answer, store: Bool, stored: Stored?)
        /// The rate limit would hold the request past its deadline.
        case failRateLimitPastDeadline
        /// This failure is final: throw it.
        indirect case fail(Failure)
    }

    private enum State {
        case lookingUp
        case freshening
        case admitting
        case waitingForRateLimit
        case authorising
        case sending
        case refreshing
        /// A retry is proposed; `outcome` is what follows if the budget refuses it, `dropped` the response to
        /// discard if it grants it.
        case awaitingBudget(at: Deadline, reason: String, outcome: Outcome, dropped: Answer?)
        case waitingForRetry
        /// The response was handed over (a streamed body may still break off and be retried).
        case delivering
        case finished
    }

    /// What a response or a failure leads to when it is not retried. The redirect's and the failure's payloads are
    /// indirect, as in ``Action``: the state holds an outcome while the budget is asked, and every change of state
    /// moves it.
    private enum Outcome {
        case deliver(Answer)
        indirect case followRedirect(Hop, dropping: Answer)
        indirect case fail(Failure)
    }

    private var planner: RetryPlanner
    /// The route's Retry-After rules (the rest of its retry policy is the planner's).
    private let retryAfterCap: Duration
    private let respectsRetryAfter: Bool
    private let deadline: Deadline
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
    /// The stored response found, if any, and how it was judged.
    private var found: (finding: CacheFinding, stored: Stored)?
    /// Whether the current request is conditional on the stored response.
    private var revalidating = false
    /// The last response's status and the last failure's kind (what `stale-if-error` looks at).
    private var lastStatus: Int?
    private var lastFailure: CourierError.Kind?
    /// Resuming a streamed body that breaks off, and the anchor of the last response (whether its body could be).
    private var resume: BodyResumption<Answer>
    private var anchor: ResumeAnchor?

    init(
        retry: RetryPolicy, maxAttempts: Int, retriesAllowed: Bool, deadline: Deadline, hasAuthoriser: Bool,
        cache: CacheRole = .none, offline: Bool = false, resumes: Bool = false
    ) {
        self.planner = RetryPlanner(retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline)
        self.retryAfterCap = retry.retryAfterCap
        self.respectsRetryAfter = retry.respectRetryAfter
        self.deadline = deadline
        self.hasAuthoriser = hasAuthoriser
        self.cacheRole = cache
        self.offline = offline
        self.resume = BodyResumption(enabled: resumes)
    }

    // MARK: - Events

    /// The load begins: with the cache lookup, or its first attempt (or, offline without a cache, its failure).
    @inline(never)
    mutating func start() -> Actions {
        if case .lookUp = cacheRole {
            state = .lookingUp
            return Actions(.lookUpCache)
        }
        guard !offline else {
            state = .finished
            return Actions(.failOffline)
        }
        return beginAttempt()
    }

    /// The cache lookup found `found`, judged (nil: nothing stored for this request, or the cache failed).
    @inline(never)
    mutating func cacheLookedUp(_ found: (finding: CacheFinding, stored: Stored)?) -> Actions {
        guard case .lookingUp = state, case .lookUp(let forceRevalidation, let onlyIfCached) = cacheRole else {
            return outOfOrder("cacheLookedUp")
        }
        self.found = found
        if offline {
            state = .finished
            guard let (finding, stored) = found, finding.servableOffline else { return Actions(.failOffline) }
            return Actions(.deliverStored(stored, finding.isFresh ? .hit : .stale(.offline)))
        }
        guard let (finding, stored) = found else {
            guard !onlyIfCached else {
                state = .finished
                return Actions(.answerUnsatisfiable)
            }
            return Actions(.cacheMiss) + beginAttempt()
        }
        let decision = forceRevalidation ? .revalidate : finding.decision
        switch decision {
        case .fresh:
            state = .finished
            return Actions(.deliverStored(stored, .hit))
        case .staleAccepted:
            state = .finished
            return Actions(.deliverStored(stored, .stale(.maxStale)))
        case .staleWhileRevalidate:
            state = .finished
            return Actions(.revalidateInBackground(stored)) + Actions(.deliverStored(stored, .stale(.staleWhileRevalidate)))
        case .unsatisfiable:
            state = .finished
            return Actions(.answerUnsatisfiable)
        case .revalidate:
            // Without a validator the stored response cannot be revalidated: the request goes as it is (and the
            // stored response may still answer if the origin fails, within its stale-if-error window).
            guard finding.hasValidators else { return Actions(.cacheMiss) + beginAttempt() }
            revalidating = true
            return Actions(.revalidate(stored)) + beginAttempt()
        }
    }

    /// The stored response as the 304 freshened it (or as it was, when it could not be rewritten), or nil when
    /// the 304 did not match it.
    @inline(never)
    mutating func freshened(_ stored: Stored?) -> Actions {
        guard case .freshening = state else { return outOfOrder("freshened") }
        guard let stored else {
            // RFC 9111 §4.3.4: a 304 that selects no stored response; ask again without the conditions, an
            // attempt the limit does not count.
            revalidating = false
            nextAttemptIsFree = true
            return Actions(.dropConditions) + beginAttempt()
        }
        state = .finished
        return Actions(.deliverStored(stored, .revalidated))
    }

    /// The rate limiter admits the attempt at `at` (`now` being when it was asked).
    @inline(never)
    mutating func admitted(at: Deadline, now: Deadline) -> Actions {
        guard case .admitting = state else { return outOfOrder("admitted") }
        guard at > now else { return afterAdmission() }
        guard at < deadline else {
            state = .finished
            return Actions(.failRateLimitPastDeadline)
        }
        state = .waitingForRateLimit
        return Actions(.waitForRateLimit(until: at))
    }

    /// The rate-limit wait is over.
    @inline(never)
    mutating func rateLimitWaited() -> Actions {
        guard case .waitingForRateLimit = state else { return outOfOrder("rateLimitWaited") }
        return afterAdmission()
    }

    /// The authoriser gave the attempt its credentials.
    @inline(never)
    mutating func authorised() -> Actions {
        guard case .authorising = state else { return outOfOrder("authorised") }
        return send()
    }

    /// A response head arrived (`answer`, its body unread): `status`, the Retry-After it asked for (nil: none or
    /// unreadable), and the next request if it is a redirect the loader follows.
    @inline(never)
    mutating func responseArrived(
        _ answer: Answer, status: Int, retryAfter requested: Duration?, redirect: Hop?, headers: HTTPHeaders = HTTPHeaders(),
        now: Deadline, using random: inout some RandomNumberGenerator
    ) -> Actions {
        guard case .sending = state else { return outOfOrder("responseArrived") }
        lastStatus = status
        lastFailure = nil
        if resume.enabled {
            switch resume.answered(status: status, headers: headers) {
            case .continues(let head, let from, let reason):
                state = .delivering
                return Actions(.continueBody(answer, head: head, from: from, reason: reason))
            case .mismatched(let why):
                state = .finished
                return Actions(.failResume(answer, why: why))
            case .other:
                anchor = revalidating ? nil : ResumeAnchor(status: status, headers: headers)
            }
        }
        if status == 304, revalidating, let (_, stored) = found {
            state = .freshening
            return Actions(.freshenStored(stored, notModified: answer))
        }
        var actions = Actions()
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
            actions.append(.discard(answer))
            actions.append(.refreshCredentials)
            return actions
        }
        let final: Outcome = redirect.map { .followRedirect($0, dropping: answer) } ?? .deliver(answer)
        // The reason is made only when a retry or a give-up is traced; most responses are final.
        let decided = decide(
            after: .status(status), wait: wait, reason: "status \(status)", otherwise: final, dropping: answer, now: now,
            using: &random
        )
        return actions + decided
    }

    /// The attempt failed with `failure` (or, after ``Action/deliver(_:store:stored:)``, its body broke off):
    /// `condition` is its retry condition, `kind` its kind, `cancelled` whether the caller is gone, `handedOver`
    /// whether part of the body already reached a stream's consumer, `delivered` how many of its bytes did.
    @inline(never)
    mutating func failed(
        _ failure: Failure, condition: RetryPolicy.Condition?, kind: CourierError.Kind, cancelled: Bool, handedOver: Bool = false,
        delivered: Int64 = 0, reason: @autoclosure () -> String, now: Deadline, using random: inout some RandomNumberGenerator
    ) -> Actions {
        var actions = Actions()
        switch state {
        case .sending: break
        case .delivering:
            // A body that broke off after its head was handed over cannot be replaced by a stored response.
            if handedOver { found = nil }
            // If it is retried, the next attempt asks for the rest of it when it can be resumed.
            if resume.enabled, !cancelled {
                let asked = resume.asking
                let range = resume.brokeOff(after: delivered, reason: reason())
                if range != asked { actions.append(.askForRange(range)) }
            }
        default: return outOfOrder("failed")
        }
        lastStatus = nil
        lastFailure = kind
        guard !cancelled else {
            state = .finished
            return Actions(.fail(failure))
        }
        return actions + decide(after: condition, wait: nil, reason: reason(), otherwise: .fail(failure), dropping: nil, now: now, using: &random)
    }

    /// The service's retry budget answered the proposed retry.
    @inline(never)
    mutating func budget(granted: Bool, now: Deadline) -> Actions {
        guard case .awaitingBudget(let at, let reason, let outcome, let dropped) = state else { return outOfOrder("budget") }
        guard granted else {
            return Actions(.gaveUp(reason: reason, why: planner.budgetRefused())) + settle(outcome)
        }
        planner.budgetGranted()
        state = .waitingForRetry
        let wait = Action.waitForRetry(until: at, reason: reason, announce: resume.asking == nil)
        return dropped.map { Actions(.discard($0)) + Actions(wait) } ?? Actions(wait)
    }

    /// The credentials were refreshed (or the refresh was someone else's and is over): the next attempt.
    @inline(never)
    mutating func refreshed() -> Actions {
        guard case .refreshing = state else { return outOfOrder("refreshed") }
        return beginAttempt()
    }

    /// The back-off (or Retry-After) wait is over: the next attempt.
    @inline(never)
    mutating func retryWaited() -> Actions {
        guard case .waitingForRetry = state else { return outOfOrder("retryWaited") }
        return beginAttempt()
    }

    // MARK: - Steps

    private mutating func beginAttempt() -> Actions {
        attempt += 1
        planner.attemptStarted(counted: !nextAttemptIsFree)
        nextAttemptIsFree = false
        state = .admitting
        return Actions(.admit)
    }

    private mutating func afterAdmission() -> Actions {
        guard hasAuthoriser else { return send() }
        state = .authorising
        return Actions(.authorise)
    }

    private mutating func send() -> Actions {
        state = .sending
        return Actions(.send(attempt: attempt))
    }

    /// The retry planner's answer for a failure or a response; `otherwise` is what happens when there is no retry,
    /// `dropping` the response to discard when there is.
    private mutating func decide(
        after condition: RetryPolicy.Condition?, wait: Duration?, reason: @autoclosure () -> String, otherwise: Outcome,
        dropping: Answer?, now: Deadline, using random: inout some RandomNumberGenerator
    ) -> Actions {
        switch planner.decide(after: condition, wait: wait, now: now, using: &random) {
        case .retry(let at):
            let reason = reason()
            state = .awaitingBudget(at: at, reason: reason, outcome: otherwise, dropped: dropping)
            return Actions(.proposeRetry(at: at, reason: reason))
        case .giveUp(let why):
            if why == .notRetryable { return settle(otherwise) }
            return Actions(.gaveUp(reason: reason(), why: why)) + settle(otherwise)
        }
    }

    /// The final actions for a response or failure that is not retried, with the cache's part in them.
    private mutating func settle(_ outcome: Outcome) -> Actions {
        if let stale = staleAnswer(for: outcome), let (_, stored) = found {
            state = .finished
            let answer = Action.deliverStored(stored, .stale(stale))
            guard case .deliver(let dropped) = outcome else { return Actions(answer) }
            return Actions(.discard(dropped)) + Actions(answer)
        }
        switch outcome {
        case .deliver(let answer):
            state = .delivering
            let restart = restartIfResuming()
            if resume.enabled { resume.delivering(answer, anchor: anchor) }
            switch cacheRole {
            case .lookUp: return restart + Actions(.deliver(answer, store: true, stored: found?.stored))
            case .invalidate: return restart + Actions(.invalidateStored(answer)) + Actions(.deliver(answer, store: false, stored: nil))
            case .none: return restart + Actions(.deliver(answer, store: false, stored: nil))
            }
        case .followRedirect(let hop, let dropped):
            state = .finished
            let follow = restartIfResuming() + Actions(.discard(dropped)) + Actions(.followRedirect(hop))
            return cacheRole == .invalidate ? Actions(.invalidateStored(dropped)) + follow : follow
        case .fail(let failure):
            state = .finished
            return Actions(.fail(failure))
        }
    }

    /// When the attempt asked for the rest of a body and its answer (`lastStatus`) is another: the consumer is told
    /// the body starts again, and the next attempts ask for the whole of it.
    private mutating func restartIfResuming() -> Actions {
        guard resume.restarting() else { return Actions() }
        let reason = lastStatus == 200
            ? "status 200: the server sent the whole body again" : "status \(lastStatus ?? 0) instead of the rest of the body"
        return Actions(.askForRange(nil)) + Actions(.announceRestart(attempt: attempt, reason: reason))
    }

    /// Why a stored response answers instead of `outcome`, if it does: the origin failed (no response, or a 500,
    /// 502, 503 or 504) and the stored response may be served on error (RFC 5861 §4; never under
    /// `must-revalidate` or `no-cache`, which the finding's `staleIfError` already reflects).
    private func staleAnswer(for outcome: Outcome) -> CacheEvent.StaleReason? {
        guard let (finding, _) = found, finding.staleIfError else { return nil }
        switch outcome {
        case .deliver:
            guard let status = lastStatus, [500, 502, 503, 504].contains(status) else { return nil }
            return .originFailed(error: .httpStatus)
        case .fail:
            guard let kind = lastFailure, ![.cancelled, .policy, .authorisation].contains(kind) else { return nil }
            return .originFailed(error: kind)
        case .followRedirect:
            return nil
        }
    }

    /// An event the current state does not expect: a fault of the owner's, not of the load's. It ends the load
    /// with no action, and a debug build stops at it.
    private mutating func outOfOrder(_ event: StaticString) -> Actions {
        assertionFailure("LoadStateMachine: \(event) out of order")
        state = .finished
        return Actions()
    }
}

extension LoadStateMachine.Action: Equatable where Answer: Equatable, Stored: Equatable, Hop: Equatable, Failure: Equatable {}
