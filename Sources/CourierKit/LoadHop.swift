internal import CourierCore
internal import CourierHTTP1
internal import CourierHTTPCache
internal import CourierTransport

/// One hop of a load (the caller's request, or a redirect's next request, each routed through the policy on its
/// own): the state of its attempts, and the one switch that performs what its ``LoadStateMachine`` decides. The
/// machine's actions carry what they act on (the response, the stored response, the next hop, the failure), so
/// nothing here guards state the machine holds.
///
/// A noncopyable struct, held in the async frame of the execution that runs it and changed in place by its
/// mutating methods: its state lives across the load's suspension points, and a copyable struct that large was
/// copied whole in and out of the async frames, while an object (as it was) cost a `malloc` and a `free` per hop,
/// a dynamic exclusivity check per access to its state, and, with 64 loads in flight, cache lines of its own
/// apart from the load's frames. Noncopyable, it is never copied, and it sits in the frame memory the load's
/// task uses anyway.
struct LoadHop: ~Copyable {
    typealias Machine = LoadStateMachine<LoadAnswer, LoadStored, RedirectFollower.Hop, CourierError>

    /// How a hop ends: with the answer, or with the next request to load.
    enum Outcome {
        case answer(Response)
        indirect case redirect(RedirectFollower.Hop)
    }

    // The state the cache stage's steps also read and change (`LoadHop+Cache.swift`) is not `private`.
    let execution: RequestExecution
    /// A redirect's request; nil for the first hop, whose request is the caller's, read from the execution where
    /// it already is (a copy of a request is a reference count per field, and then its release).
    private let redirected: Request?
    let url: HTTPURL
    let route: Route
    /// The load's one deadline, the same for every hop.
    let deadline: Deadline
    var machine: Machine
    let stage: CacheStage?
    /// What the next attempt sends: the caller's fields (and an idempotency key), made conditional on a stored
    /// response while it is revalidated; and, with a cache stage only, the caller's fields to go back to.
    var headers: HTTPHeaders
    private let callerHeaders: HTTPHeaders
    private var authoriser: AuthoriserSlot?
    /// The current attempt's request as its authoriser returned it (nil: the route has no authoriser).
    var authorised: AuthorisationRequest?
    /// The authoriser's refresh count when the current attempt was authorised.
    private var seenEpoch = 0
    var cacheStatus: CacheStatus?
    /// Why the cache lookup removed a corrupt record, for the trace's `cache miss` line.
    var removedCorrupt: String?
    /// The fields the current attempt sent, and when it was sent and answered (wall clock), for the cache stage
    /// only (without one they are not kept).
    var sentHeaders = HTTPHeaders()
    var sentAt = 0.0
    var answeredAt = 0.0
    /// When the current attempt asked the rate limiter, and when the machine last decided on a response or a
    /// failure (the instant its retry delays count from).
    var arrived: Deadline
    private var decidedAt: Deadline
    var timeline: ResponseTimeline
    var tried: [String] = []
    /// The bytes of the body being streamed that reached the consumer (what a resumed attempt asks after).
    var bodyDelivered: Int64 = 0
    private var random = SystemRandomNumberGenerator()
    /// The route's service name and retry budget, read once: each read through the route copies its retry
    /// policy or its name.
    private let serviceName: String
    private let budget: RetryPolicy.Budget?
    let hasAuthoriser: Bool
    /// What the last response's Retry-After made the endpoint pause for (nil: none, or not respected), and whether
    /// the current attempt's rate-limit wait is the fleet's: what the load's report calls its waits.
    private var retryAfterApplied: Duration?
    private var fleetWaits = false
    /// Whether this hop has counted as a request in the service's retry budget (when its first attempt goes out:
    /// a cache hit or an offline answer sends nothing and earns no retries).
    private var countedInBudget = false

    let service: DataLoaderService

    /// A hop for `request` (the execution's own for the first hop, not kept: `redirected` says whether to keep it)
    /// to `url`, its URL parsed, on `route`; `deadline` is the load's, once the first hop has made it.
    ///
    /// Out of line: inlined into the async function that makes the hop, its temporaries would be slots in that
    /// function's frame.
    @inline(never)
    init(
        _ execution: RequestExecution, request: borrowing Request, redirected: Bool, url: consuming HTTPURL,
        route: consuming Route, deadline: Deadline?
    ) throws(CourierError) {
        self.execution = execution
        self.service = execution.factory.service
        self.redirected = redirected ? copy request : nil
        let queued = execution.queued
        self.deadline = deadline ?? queued + (request.timeout ?? route.timeouts.total)
        let authoriser = route.authoriser
        if let instance = authoriser, url.scheme != "https", !instance.allowPlainHTTP {
            throw CourierError(
                .policy,
                "authoriser '\(instance.name)' does not send credentials over plain http (the policy can set allow-plain-http: true)",
                url: request.url
            )
        }
        var headers = request.headers
        let retry = route.retry
        self.serviceName = route.serviceName ?? ""
        self.budget = retry.budget
        self.hasAuthoriser = authoriser != nil
        if !request.method.isIdempotent, route.retriesAllowed, let keyHeader = retry.idempotencyKeyHeader, !headers.contains(keyHeader) {
            // One key for the whole request: every attempt carries it, so the server can tell a retry from a new
            // request.
            headers.add(name: keyHeader, value: RequestExecution.makeIdempotencyKey())
        }
        let (stage, cacheRole) = execution.cacheStage(of: request, route: route)
        // Each copy of the fields is two references more to count, and only the cache stage reads the others.
        (self.headers, self.callerHeaders) = (headers, stage == nil ? HTTPHeaders() : headers)
        self.stage = stage
        self.cacheStatus = stage == nil ? nil : .miss
        (self.arrived, self.decidedAt) = (queued, queued)
        self.timeline = ResponseTimeline(queued: queued)
        self.machine = Machine(
            retry: retry, maxAttempts: max(1, request.maxAttempts ?? retry.maxAttempts), retriesAllowed: route.retriesAllowed,
            deadline: self.deadline, hasAuthoriser: authoriser != nil, cache: cacheRole,
            offline: execution.factory.isOffline,
            resumes: execution.events != nil && request.method == .get && !headers.contains("Range") && !headers.contains("If-Range")
        )
        // Last: moved, where stored earlier they would have been copied for the reads above.
        self.url = url
        self.route = route
    }

    /// The hop's request, whole (a copy: for the rare uses that need all of it, such as a redirect's next request).
    var request: Request { redirected ?? execution.request }

    // The fields of the hop's request the hop reads, each without a copy of the whole request.
    var method: HTTPMethod { redirected?.method ?? execution.request.method }
    var requestURL: String { redirected?.url ?? execution.request.url }
    private var requestHeaders: HTTPHeaders { redirected?.headers ?? execution.request.headers }
    var body: [UInt8]? { redirected != nil ? redirected?.body : execution.request.body }
    var bodyStream: RequestBodyStream? { redirected != nil ? redirected?.bodyStream : execution.request.bodyStream }
    var userInfo: [String: String] { redirected?.userInfo ?? execution.request.userInfo }

    /// Runs the hop to its answer or its redirect, performing every action of the machine.
    @inline(never)
    nonisolated(nonsending) mutating func run(
        _ counters: inout RequestExecution.Counters, _ follower: inout RedirectFollower
    ) async throws(CourierError) -> Outcome {
        var actions = machine.start()
        while let action = actions.popFirst() {
            switch action {
            case .lookUpCache:
                actions += machine.cacheLookedUp(await lookUp())

            case .cacheMiss:
                if let removedCorrupt {
                    execution.trace(machine.attempt, .cache(.miss), detail: "a corrupt stored response was removed: \(removedCorrupt)")
                } else {
                    execution.trace(machine.attempt, .cache(.miss))
                }

            case .revalidate(let stored):
                execution.trace(machine.attempt, .cache(.revalidating))
                headers = stored.lookup.conditionalHeaders

            case .dropConditions:
                execution.trace(machine.attempt, .cache(.miss))
                headers = callerHeaders

            case .revalidateInBackground(let stored):
                execution.revalidateInBackground(request, recordKey: stored.lookup.recordKey)

            case .deliverStored(let stored, let kind):
                return .answer(try await answer(stored, as: kind, &counters))

            case .freshenStored(let stored, let notModified):
                actions += machine.freshened(await freshen(stored, from: notModified, &counters))

            case .invalidateStored(let answer):
                await invalidate(with: answer)

            case .failOffline:
                throw CourierError(.offline, "the loader is offline and nothing stored answers: no request is sent", url: requestURL)

            case .answerUnsatisfiable:
                return .answer(answerUnsatisfiable())

            case .admit:
                arrived = service.now()
                // The first attempt counts the request in its service's retry budget (a cache hit or an offline
                // answer sends nothing and earns no retries).
                let counting = countedInBudget ? nil : budget
                countedInBudget = true
                // The rate limit (and any Retry-After pause of the endpoint key) first: requests wait in order.
                counters.attempt += 1
                let limit = route.rateLimit
                if let limit, limit.scope == .fleet, let fleet = service.fleet {
                    // The process's limiter still counts the budget and keeps this process's pauses.
                    let local = service.admit(key: route.endpointKey, limit: nil, now: arrived, service: serviceName, budget: counting)
                    let at = try await admitFleet(fleet, limit: limit, local: local)
                    fleetWaits = at > local
                    actions += machine.admitted(at: at, now: arrived)
                } else {
                    let at = service.admit(key: route.endpointKey, limit: limit, now: arrived, service: serviceName, budget: counting)
                    fleetWaits = false
                    actions += machine.admitted(at: at, now: arrived)
                }

            case .waitForRateLimit(let until):
                counters.report.waited(fleetWaits ? .fleet(until - arrived) : .rateLimit(until - arrived))
                try await waitForRateLimit(until: until)
                actions += machine.rateLimitWaited()

            case .failRateLimitPastDeadline:
                throw CourierError(
                    .timeout, "the rate limit for \(route.endpointKey) would hold the request past its deadline", url: requestURL
                )

            case .authorise:
                try await authorise()
                actions += machine.authorised()

            case .send(let attempt):
                retryAfterApplied = nil
                switch await send(attempt: attempt) {
                case .success(let answer):
                    actions += try arrived(answer, attempt: attempt, &counters, &follower)
                case .failure(let error):
                    actions += failed(error, &counters, handedOver: false, afterHead: false)
                }

            case .noteRetryAfter(let requested, let applied):
                retryAfterApplied = applied > .zero ? applied : nil
                execution.trace(machine.attempt, .retryAfter(requested: requested, applied: applied, key: route.endpointKey))

            case .pauseEndpoint(let until):
                service.pause(key: route.endpointKey, until: until)
                if let limit = route.rateLimit, limit.scope == .fleet, let fleet = service.fleet {
                    await shareFleetPause(fleet, limit: limit, until: until)
                }

            case .discard(let answer):
                counters.count(await drain(answer))

            case .refreshCredentials:
                if let refresh = try await refreshCredentials() { counters.report.refreshed(refresh.authoriser, role: refresh.role) }
                actions += machine.refreshed()

            case .proposeRetry:
                let now = service.now()
                actions += machine.budget(
                    granted: service.tryRetry(service: serviceName, budget: budget, now: now), now: now
                )

            case .gaveUp(let reason, let why):
                execution.trace(machine.attempt, .givingUp(reason: reason, why: why.description))

            case .waitForRetry(let until, let reason, let announce):
                // The back-off as decided; a Retry-After of the last response that was longer is the wait's cause.
                let delay = until - decidedAt
                counters.report.waited(retryAfterApplied.map { delay <= $0 } == true ? .retryAfter(delay) : .backoff(delay))
                try await waitForRetry(until: until, reason: reason, announce: announce)
                actions += machine.retryWaited()

            case .askForRange(let range):
                askFor(range)

            case .announceRestart(let attempt, let reason):
                try await execution.announceRetry(attempt: attempt, reason: reason)

            case .continueBody(let answer, let head, let from, let reason):
                do {
                    return .answer(try await continueBody(answer, head: head, from: from, reason: reason, &counters))
                } catch {
                    actions += failed(error, &counters, handedOver: true, afterHead: true)
                }

            case .failResume(let answer, let why):
                counters.count(answer.abandon())
                throw CourierError(.protocol, "the download could not be resumed: \(why)", url: requestURL)

            case .followRedirect(let hop):
                follower.follow()
                counters.redirects = follower.followed
                return .redirect(hop)

            case .deliver(let answer, let store, let found):
                do {
                    return .answer(try await read(answer, storing: store, over: found, &counters))
                } catch {
                    // A body that broke off goes back to the machine.
                    actions += failed(error, &counters, handedOver: execution.events != nil, afterHead: true)
                }

            case .fail(let error):
                if error.kind == .cancelled || CancellationScope.isCancelled {
                    throw CourierError(.cancelled, "the request was cancelled", url: requestURL, cause: error)
                }
                throw error
            }
        }
        // The machine always ends with an answer or a failure; an owner's fault that stops it is reported, not
        // hung on.
        throw CourierError(.protocol, "the load stopped without an answer (an internal fault)", url: requestURL)
    }

    // MARK: - Steps
    //
    // Each step that waits is an async function of its own, never inlined into `run`: an async function's frame
    // holds every local of everything inlined into it, and with the cache, authoriser and stream steps inlined
    // `run`'s frame was 27 KB per load in flight (64 loads at once: 1.7 MB, far past the core's cache), most of it
    // for steps a plain load never takes. Out of line, a step's frame exists only while it runs, and the steps of
    // one load reuse the same memory one after another.

    /// The response head of attempt `attempt` arrived: noted, and told to the machine with what it asks for (a
    /// Retry-After, a redirect to follow). Out of line too, though it does not wait: inlined, its temporaries (the
    /// machine's, the redirect's) would be slots in `run`'s frame.
    @inline(never)
    private mutating func arrived(
        _ answer: LoadAnswer, attempt: Int, _ counters: inout RequestExecution.Counters, _ follower: inout RedirectFollower
    ) throws(CourierError) -> Machine.Actions {
        let head = answer.exchange.head
        let status = head.status
        counters.status = status
        counters.report.attempted(attempt, status: status)
        execution.trace(attempt, .response(status: status))
        timeline.noteHead(answer.exchange.metrics)
        let requested = status >= 300 ? head.headers["retry-after"].flatMap { RetryAfter.delay($0, now: service.wallClock()) } : nil
        let redirect: RedirectFollower.Hop?
        do {
            redirect = try follower.next(
                status: status, location: head.headers["location"], method: method, url: url,
                headers: requestHeaders, bodyReplayable: true
            )
        } catch {
            counters.count(answer.abandon())
            throw error
        }
        return machine.responseArrived(
            answer, status: status, retryAfter: requested, redirect: redirect, headers: head.headers, now: decided(), using: &random
        )
    }

    @inline(never)
    nonisolated(nonsending) private mutating func waitForRateLimit(until: Deadline) async throws(CourierError) {
        execution.trace(machine.attempt, .rateLimited(key: route.endpointKey, wait: until - arrived))
        try await RequestExecution.sleep(until: until, on: service.clock, url: requestURL)
        timeline.rateLimitWait += service.now() - arrived
    }

    /// Tells a stream's consumer (unless the next attempt asks for the rest of the body), then waits out the
    /// back-off.
    @inline(never)
    nonisolated(nonsending) private mutating func waitForRetry(until: Deadline, reason: String, announce: Bool) async throws(CourierError) {
        // The back-off as decided, not what is left of it once the trace runs.
        let traced = announce ? reason : "\(reason), asking for the rest of the body"
        execution.trace(machine.attempt, .retrying(reason: traced, delay: until - decidedAt))
        if announce { try await execution.announceRetry(attempt: machine.attempt + 1, reason: reason) }
        let before = service.now()
        try await RequestExecution.sleep(until: until, on: service.clock, url: requestURL)
        timeline.backoffWait += service.now() - before
    }

    /// Reads and drops a response that is not the answer; its final figures.
    @inline(never)
    nonisolated(nonsending) private func drain(_ answer: LoadAnswer) async -> RequestMetrics {
        await answer.drain()
    }

    private mutating func decided() -> Deadline {
        decidedAt = service.now()
        return decidedAt
    }

    /// A failed attempt (or a body that broke off, ``bodyDelivered`` of its bytes handed over): its bytes counted,
    /// the machine told.
    @inline(never)
    mutating func failed(
        _ error: CourierError, _ counters: inout RequestExecution.Counters, handedOver: Bool, afterHead: Bool
    ) -> Machine.Actions {
        execution.trace.attemptFailed(error)
        counters.report.attempted(machine.attempt, failed: error.kind, afterHead: afterHead)
        counters.sent += error.bytesSent
        counters.received += error.bytesReceived
        return machine.failed(
            error, condition: error.retryCondition, kind: error.kind,
            cancelled: error.kind == .cancelled || CancellationScope.isCancelled, handedOver: handedOver,
            delivered: handedOver ? bodyDelivered : 0, reason: "\(error.kind): \(error.message)", now: decided(), using: &random
        )
    }

    /// Runs the route's authoriser on the attempt (made on first use; an offline load never makes it).
    @inline(never)
    nonisolated(nonsending) private mutating func authorise() async throws(CourierError) {
        guard let instance = route.authoriser else { return }
        let slot: AuthoriserSlot
        if let made = authoriser { slot = made } else { slot = try execution.factory.authoriser(for: instance) }
        authoriser = slot
        let started = service.now()
        execution.trace(machine.attempt, .authorising(authoriser: instance.name))
        seenEpoch = slot.epoch
        let unauthorised = AuthorisationRequest(
            method: method, url: url, headers: headers, body: bodyStream == nil ? body : nil,
            hasStreamedBody: bodyStream != nil
        )
        let deadline = self.deadline
        let made: AuthorisationRequest
        if instance.shareTokens {
            let (execution, attempt, name) = (self.execution, machine.attempt, instance.name)
            made = try await SharedTokenTrace.traced({ execution.trace(attempt, .coordination(.sharedToken(authoriser: name, decision: $0))) }) {
                () async throws(CourierError) -> AuthorisationRequest in
                try await slot.authorise(unauthorised, deadline: deadline)
            }
        } else {
            made = try await slot.authorise(unauthorised, deadline: deadline)
        }
        authorised = made
        timeline.authoriserWait += service.now() - started
        guard made.url.host == url.host, made.url.scheme == url.scheme, made.url.port == url.port else {
            throw CourierError(.authorisation, "authoriser '\(instance.name)' changed the request's origin", url: requestURL)
        }
    }

    /// After a 401: the authoriser takes the refused credentials back and refreshes them (once, shared); the
    /// part this load played, for its report (nil: the route has no authoriser).
    @inline(never)
    nonisolated(nonsending) private mutating func refreshCredentials() async throws(CourierError) -> LoadReport.Refresh? {
        guard let authoriser, let authorised else { return nil }
        let started = service.now()
        let (attempt, name) = (machine.attempt, authoriser.name)
        let execution = self.execution
        let (seen, deadline) = (seenEpoch, self.deadline)
        let refresh = { () async throws(CourierError) -> LoaderEvent.RefreshRole in
            try await authoriser.refresh(after: authorised, seen: seen, deadline: deadline) { role throws(CourierError) in
                execution.trace(attempt, .refreshing(authoriser: name, role: role))
                try await execution.announceRetry(attempt: attempt + 1, reason: "status 401 (credentials refreshed)")
            }
        }
        let role: LoaderEvent.RefreshRole
        if route.authoriser?.shareTokens == true {
            role = try await SharedTokenTrace.traced({ execution.trace(attempt, .coordination(.sharedToken(authoriser: name, decision: $0))) }, refresh)
        } else {
            role = try await refresh()
        }
        timeline.authoriserWait += service.now() - started
        return LoadReport.Refresh(authoriser: name, role: role)
    }

    /// Reads the answer's body (whole, or delivered to the stream's consumer as it comes) and stores it when the
    /// machine said so and RFC 9111 allows: the response, or the failure of a body that broke off.
    /// `storing`: whether to store it, over `found`, the stored response found (if any). The stored response is
    /// passed boxed and opened only to store: a cache lookup is hundreds of bytes, and every optional copy of it
    /// was a slot in this function's frame.
    @inline(never)
    nonisolated(nonsending) private mutating func read(
        _ answer: LoadAnswer, storing: Bool, over found: LoadStored?, _ counters: inout RequestExecution.Counters
    ) async throws(CourierError) -> Response {
        if let events = execution.events {
            return try await stream(answer, to: events, storing: storing, over: found, &counters)
        }
        let whole = try await service.client.readWhole(answer.exchange, limit: service.maxBodyBytes)
        counters.count(whole.metrics)
        if storing { await store(whole.head, body: whole.body, over: found) }
        return response(whole.head, body: whole.body, url: whole.url, counters)
    }

    /// ``read(_:storing:over:_:)`` for a stream's consumer, who gets the body chunk by chunk.
    @inline(never)
    nonisolated(nonsending) private mutating func stream(
        _ answer: LoadAnswer, to events: LoadChannel, storing: Bool, over found: LoadStored?,
        _ counters: inout RequestExecution.Counters
    ) async throws(CourierError) -> Response {
        let limit = storing ? stage?.streamedBodyLimit : nil
        bodyDelivered = 0
        let (final, kept) = try await events.deliver(
            service.client.streaming(answer.exchange), attempt: machine.attempt, keeping: limit, delivered: &bodyDelivered
        ).get()
        counters.count(final)
        if let limit {
            if let kept {
                await store(answer.exchange.head, body: kept, over: found)
            } else {
                execution.trace(machine.attempt, .cache(.notStored(reason: "the streamed body is larger than \(limit) bytes")))
            }
        }
        // The consumer has the body.
        return response(answer.exchange.head, body: [], url: answer.exchange.url, counters)
    }

    /// The answer from the network, read (its body, unless a stream's consumer has it).
    mutating func response(_ head: HTTPResponseHead, body: [UInt8], url: HTTPURL, _ counters: RequestExecution.Counters) -> Response {
        timeline.doneAt = service.now()
        var response = Response(
            status: head.status, reason: head.reason, headers: head.headers, body: body, url: url,
            attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
            bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
            userInfo: userInfo, cache: cacheStatus
        )
        response.httpVersion = head.version.description
        response.report = counters.report
        return response
    }

}
