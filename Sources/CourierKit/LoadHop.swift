internal import CourierCore
internal import CourierHTTP1
internal import CourierHTTPCache
internal import CourierTransport

/// One hop of a load (the caller's request, or a redirect's next request, each routed through the policy on its
/// own): the state of its attempts, and the one switch that performs what its ``LoadStateMachine`` decides. The
/// machine's actions carry what they act on (the response, the stored response, the next hop, the failure), so
/// nothing here guards state the machine holds.
///
/// A class, not a struct: its state lives across the load's suspension points, and a struct that large is copied
/// whole (through its value witnesses) in and out of the async frames; an object is referenced.
final class LoadHop {
    typealias Machine = LoadStateMachine<LoadAnswer, LoadStored, RedirectFollower.Hop, CourierError>

    /// How a hop ends: with the answer, or with the next request to load.
    enum Outcome {
        case answer(Response)
        case redirect(RedirectFollower.Hop)
    }

    let execution: RequestExecution
    let request: Request
    let url: HTTPURL
    let route: Route
    /// The load's one deadline, the same for every hop.
    let deadline: Deadline
    private var machine: Machine
    private let stage: CacheStage?
    /// The caller's fields (and an idempotency key), and what the next attempt sends: made conditional on a
    /// stored response while it is revalidated.
    private let callerHeaders: HTTPHeaders
    private var headers: HTTPHeaders
    private var authoriser: AuthoriserSlot?
    /// The current attempt's request as its authoriser returned it (nil: the route has no authoriser).
    private var authorised: AuthorisationRequest?
    /// The authoriser's refresh count when the current attempt was authorised.
    private var seenEpoch = 0
    private var cacheStatus: CacheStatus?
    /// The fields the current attempt sent, and when it was sent and answered (wall clock, for the cache).
    private var sentHeaders: HTTPHeaders
    private var sentAt = 0.0
    private var answeredAt = 0.0
    /// When the current attempt asked the rate limiter, and when the machine last decided on a response or a
    /// failure (the instant its retry delays count from).
    private var arrived: Deadline
    private var decidedAt: Deadline
    private var timeline: ResponseTimeline
    private var tried: [String] = []
    private var random = SystemRandomNumberGenerator()
    /// Whether this hop has counted as a request in the service's retry budget (when its first attempt goes out:
    /// a cache hit or an offline answer sends nothing and earns no retries).
    private var countedInBudget = false

    private let service: DataLoaderService
    private let trace: LoaderTracer

    init(_ execution: RequestExecution, request: Request, url: HTTPURL, route: Route, deadline: Deadline?) throws(CourierError) {
        self.execution = execution
        self.service = execution.factory.service
        self.trace = execution.trace
        self.request = request
        self.url = url
        self.route = route
        let queued = execution.queued
        self.deadline = deadline ?? queued + (request.timeout ?? route.timeouts.total)
        if let instance = route.authoriser, url.scheme != "https", !instance.allowPlainHTTP {
            throw CourierError(
                .policy,
                "authoriser '\(instance.name)' does not send credentials over plain http (the policy can set allow-plain-http: true)",
                url: request.url
            )
        }
        var headers = request.headers
        let retry = route.retry
        if !request.method.isIdempotent, route.retriesAllowed, let keyHeader = retry.idempotencyKeyHeader, !headers.contains(keyHeader) {
            // One key for the whole request: every attempt carries it, so the server can tell a retry from a new
            // request.
            headers.add(name: keyHeader, value: RequestExecution.makeIdempotencyKey())
        }
        (self.callerHeaders, self.headers, self.sentHeaders) = (headers, headers, headers)
        let (stage, cacheRole) = execution.cacheStage(of: request, route: route)
        self.stage = stage
        self.cacheStatus = stage == nil ? nil : .miss
        (self.arrived, self.decidedAt) = (queued, queued)
        self.timeline = ResponseTimeline(queued: queued)
        self.machine = Machine(
            retry: retry, maxAttempts: max(1, request.maxAttempts ?? retry.maxAttempts), retriesAllowed: route.retriesAllowed,
            deadline: self.deadline, hasAuthoriser: route.authoriser != nil, cache: cacheRole,
            offline: execution.factory.isOffline
        )
    }

    /// Runs the hop to its answer or its redirect, performing every action of the machine.
    nonisolated(nonsending) func run(
        _ counters: inout RequestExecution.Counters, _ follower: inout RedirectFollower
    ) async throws(CourierError) -> Outcome {
        var actions = machine.start()
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .lookUpCache:
                var found: (LoadCacheFinding, LoadStored)?
                do throws(CourierError) {
                    if let stage, let (lookup, finding) = try await stage.lookUp(
                        method: request.method, url: url, headers: headers, revalidating: execution.revalidation
                    ) {
                        found = (finding, LoadStored(lookup))
                    }
                } catch {
                    trace(0, .cache(.failed(error: error)))
                }
                actions += machine.cacheLookedUp(found)

            case .cacheMiss:
                trace(machine.attempt, .cache(.miss))

            case .revalidate(let stored):
                trace(machine.attempt, .cache(.revalidating))
                headers = stored.lookup.conditionalHeaders

            case .dropConditions:
                trace(machine.attempt, .cache(.miss))
                headers = callerHeaders

            case .revalidateInBackground(let stored):
                execution.revalidateInBackground(request, recordKey: stored.lookup.recordKey)

            case .deliverStored(let stored, let kind):
                return .answer(try await answer(stored.lookup, as: kind, &counters))

            case .freshenStored(let stored, let notModified):
                counters.count(await notModified.drain())
                actions += machine.freshened(await freshen(stored.lookup, from: notModified.exchange).map(LoadStored.init))

            case .invalidateStored(let answer):
                let head = answer.exchange.head
                if let stage, let event = await stage.invalidate(method: request.method, url: url, status: head.status, headers: head.headers) {
                    trace(machine.attempt, .cache(event))
                }

            case .failOffline:
                throw CourierError(.offline, "the loader is offline and nothing stored answers: no request is sent", url: request.url)

            case .answerUnsatisfiable:
                // RFC 9111 §5.2.1.7: only-if-cached and nothing usable stored.
                timeline.doneAt = .now()
                return .answer(Response(
                    status: 504, reason: "Gateway Timeout", headers: HTTPHeaders(), body: [], url: url, attempts: 0,
                    retryAfter: nil, addressesTried: [], timeline: timeline, bytesSent: 0, bytesReceived: 0, redirects: 0,
                    userInfo: request.userInfo, cache: cacheStatus
                ))

            case .admit:
                arrived = .now()
                if !countedInBudget {
                    countedInBudget = true
                    service.recordRequest(service: route.serviceName ?? "", budget: route.retry.budget, now: arrived)
                }
                // The rate limit (and any Retry-After pause of the endpoint key) first: requests wait in order.
                counters.attempt += 1
                actions += machine.admitted(at: service.admit(key: route.endpointKey, limit: route.rateLimit, now: arrived), now: arrived)

            case .waitForRateLimit(let until):
                trace(machine.attempt, .rateLimited(key: route.endpointKey, wait: until - arrived))
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.rateLimitWait += .now() - arrived
                actions += machine.rateLimitWaited()

            case .failRateLimitPastDeadline:
                throw CourierError(
                    .timeout, "the rate limit for \(route.endpointKey) would hold the request past its deadline", url: request.url
                )

            case .authorise:
                try await authorise()
                actions += machine.authorised()

            case .send(let attempt):
                switch await send(attempt: attempt) {
                case .success(let answer):
                    let status = answer.exchange.head.status
                    counters.status = status
                    trace(attempt, .response(status: status))
                    timeline.noteHead(answer.exchange.metrics)
                    let requested = status >= 300
                        ? answer.exchange.head.headers["retry-after"].flatMap { RetryAfter.delay($0, now: service.wallClock()) } : nil
                    let redirect: RedirectFollower.Hop?
                    do {
                        redirect = try follower.next(
                            status: status, location: answer.exchange.head.headers["location"], method: request.method, url: url,
                            headers: request.headers, bodyReplayable: true
                        )
                    } catch {
                        counters.count(answer.abandon())
                        throw error
                    }
                    actions += machine.responseArrived(
                        answer, status: status, retryAfter: requested, redirect: redirect, now: decided(), using: &random
                    )
                case .failure(let error):
                    actions += failed(error, &counters, handedOver: false)
                }

            case .noteRetryAfter(let requested, let applied):
                trace(machine.attempt, .retryAfter(requested: requested, applied: applied, key: route.endpointKey))

            case .pauseEndpoint(let until):
                service.pause(key: route.endpointKey, until: until)

            case .discard(let answer):
                counters.count(await answer.drain())

            case .refreshCredentials:
                try await refreshCredentials()
                actions += machine.refreshed()

            case .proposeRetry:
                let now = Deadline.now()
                actions += machine.budget(
                    granted: service.tryRetry(service: route.serviceName ?? "", budget: route.retry.budget, now: now), now: now
                )

            case .gaveUp(let reason, let why):
                trace(machine.attempt, .givingUp(reason: reason, why: why.description))

            case .waitForRetry(let until, let reason):
                // The back-off as decided, not what is left of it once the trace runs.
                trace(machine.attempt, .retrying(reason: reason, delay: until - decidedAt))
                try await execution.announceRetry(attempt: machine.attempt + 1, reason: reason)
                let before = Deadline.now()
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.backoffWait += .now() - before
                actions += machine.retryWaited()

            case .followRedirect(let hop):
                follower.follow()
                counters.redirects = follower.followed
                return .redirect(hop)

            case .deliver(let answer, let store, let found):
                switch await read(answer, storingOver: store ? .some(found?.lookup) : nil, &counters) {
                case .success(let response): return .answer(response)
                case .failure(let error): actions += failed(error, &counters, handedOver: execution.events != nil)
                }

            case .fail(let error):
                if error.kind == .cancelled || CancellationScope.isCancelled {
                    throw CourierError(.cancelled, "the request was cancelled", url: request.url, cause: error)
                }
                throw error
            }
        }
        // The machine always ends with an answer or a failure; an owner's fault that stops it is reported, not
        // hung on.
        throw CourierError(.protocol, "the load stopped without an answer (an internal fault)", url: request.url)
    }

    // MARK: - Steps

    private func decided() -> Deadline {
        decidedAt = .now()
        return decidedAt
    }

    /// A failed attempt (or a body that broke off): its bytes counted, the machine told.
    private func failed(_ error: CourierError, _ counters: inout RequestExecution.Counters, handedOver: Bool) -> [Machine.Action] {
        trace.attemptFailed(error)
        counters.sent += error.bytesSent
        counters.received += error.bytesReceived
        return machine.failed(
            error, condition: error.retryCondition, kind: error.kind,
            cancelled: error.kind == .cancelled || CancellationScope.isCancelled, handedOver: handedOver,
            reason: "\(error.kind): \(error.message)", now: decided(), using: &random
        )
    }

    /// Runs the route's authoriser on the attempt (made on first use; an offline load never makes it).
    nonisolated(nonsending) private func authorise() async throws(CourierError) {
        guard let instance = route.authoriser else { return }
        let slot: AuthoriserSlot
        if let made = authoriser { slot = made } else { slot = try execution.factory.authoriser(for: instance) }
        authoriser = slot
        let started = Deadline.now()
        trace(machine.attempt, .authorising(authoriser: instance.name))
        seenEpoch = slot.epoch
        let unauthorised = AuthorisationRequest(
            method: request.method, url: url, headers: headers, body: request.bodyStream == nil ? request.body : nil,
            hasStreamedBody: request.bodyStream != nil
        )
        let made = try await slot.authorise(unauthorised, deadline: deadline)
        authorised = made
        timeline.authoriserWait += .now() - started
        guard made.url.host == url.host, made.url.scheme == url.scheme, made.url.port == url.port else {
            throw CourierError(.authorisation, "authoriser '\(instance.name)' changed the request's origin", url: request.url)
        }
    }

    /// After a 401: the authoriser takes the refused credentials back and refreshes them (once, shared).
    nonisolated(nonsending) private func refreshCredentials() async throws(CourierError) {
        guard let authoriser, let authorised else { return }
        let started = Deadline.now()
        let (attempt, name) = (machine.attempt, authoriser.name)
        let (execution, trace) = (self.execution, self.trace)
        try await authoriser.refresh(after: authorised, seen: seenEpoch, deadline: deadline) { role throws(CourierError) in
            trace(attempt, .refreshing(authoriser: name, role: role))
            try await execution.announceRetry(attempt: attempt + 1, reason: "status 401 (credentials refreshed)")
        }
        timeline.authoriserWait += .now() - started
    }

    /// One attempt: the URL's own host, then its fallbacks in order, skipping targets that are cooling down after
    /// a failure (`FallbackSelection`). Only a resolve or connect failure moves on to the next target.
    nonisolated(nonsending) private func send(attempt: Int) async -> Result<LoadAnswer, CourierError> {
        let (sendURL, sendHeaders) = authorised.map { ($0.url, $0.headers) } ?? (url, headers)
        sentHeaders = sendHeaders
        // The wall-clock instants are the cache's (RFC 9111's request and response times) only.
        if stage != nil { sentAt = service.wallClock() }
        let service = self.service
        let selection = FallbackSelection(host: url.host, port: url.port, fallbacks: route.fallbacks) {
            service.isCoolingDown($0, now: .now())
        }
        for label in selection.skipped { trace(attempt, .coolingDown(target: label)) }
        // The selection always holds at least the URL's own host; `last` is set before the loop can end.
        var last: CourierError?
        for target in selection.candidates {
            guard Deadline.now() < deadline else {
                return .failure(CourierError(.timeout, "the total deadline passed", url: request.url))
            }
            tried.append(target.label)
            trace(attempt, .connecting(target: target.label, fallback: target.address != nil))
            var outgoing = HTTPRequest(
                method: request.method, url: sendURL, headers: trace.outgoing(sendHeaders, url: sendURL, route: route),
                body: request.bodyStream.map { .stream($0.makeStream()) } ?? request.body.map { .bytes($0) } ?? .none,
                timeouts: route.timeouts, connectTo: target.address, userAgent: service.userAgent
            )
            // Only an https URL's connection is keyed and built with TLS settings.
            if route.serviceName != nil, url.scheme == "https" { outgoing.tlsOverlay = route.tls }
            do {
                // The load's one deadline, as it was made when the load started: the transport takes it unchanged.
                let exchange = try await service.client.exchange(outgoing, deadline: deadline)
                service.markWorking(target.label)
                if stage != nil { answeredAt = service.wallClock() }
                return .success(LoadAnswer(exchange))
            } catch {
                last = error
                guard error.targetUnreachable else { return .failure(error) }
                trace(attempt, .unreachable(target: target.label, error: error))
                service.markFailed(target.label, now: .now())
            }
        }
        return .failure(last ?? CourierError(.connect, "no connect target", url: request.url))
    }

    /// Reads the answer's body (whole, or delivered to the stream's consumer as it comes) and stores it when the
    /// machine said so and RFC 9111 allows.
    /// `storingOver` is nil when the answer is not to be stored, else the stored response found (if any).
    nonisolated(nonsending) private func read(
        _ answer: LoadAnswer, storingOver found: HTTPCache.Lookup??, _ counters: inout RequestExecution.Counters
    ) async -> Result<Response, CourierError> {
        let storing = found == nil ? nil : stage
        let response: Response
        if let events = execution.events {
            switch await events.deliver(service.client.streaming(answer.exchange), attempt: machine.attempt, keeping: storing?.streamedBodyLimit) {
            case .success(let (final, kept)):
                counters.count(final)
                if let storing {
                    guard let kept else {
                        trace(machine.attempt, .cache(.notStored(reason: "the streamed body is larger than \(storing.streamedBodyLimit) bytes")))
                        break
                    }
                    await self.store(answer.exchange.head, body: kept, in: storing, found: found ?? nil)
                }
            case .failure(let error):
                return .failure(error)
            }
            // The consumer has the body.
            response = self.response(answer.exchange.head, body: [], url: answer.exchange.url, counters)
        } else {
            do {
                let whole = try await service.client.readWhole(answer.exchange, limit: service.maxBodyBytes)
                counters.count(whole.metrics)
                if let storing { await self.store(whole.head, body: whole.body, in: storing, found: found ?? nil) }
                response = self.response(whole.head, body: whole.body, url: whole.url, counters)
            } catch {
                return .failure(error)
            }
        }
        return .success(response)
    }

    /// The answer from the network, read (its body, unless a stream's consumer has it).
    private func response(_ head: HTTPResponseHead, body: [UInt8], url: HTTPURL, _ counters: RequestExecution.Counters) -> Response {
        timeline.doneAt = .now()
        return Response(
            status: head.status, reason: head.reason, headers: head.headers, body: body, url: url,
            attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
            bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
            userInfo: request.userInfo, cache: cacheStatus
        )
    }

    /// Stores an answer whose body is `body`, when RFC 9111 allows.
    nonisolated(nonsending) private func store(_ head: HTTPResponseHead, body: [UInt8], in stage: CacheStage, found: HTTPCache.Lookup?) async {
        let event = await stage.store(
            method: request.method, url: url, requestHeaders: sentHeaders, status: head.status, reason: head.reason,
            headers: head.headers, body: body, requestTime: sentAt, responseTime: answeredAt, found: found
        )
        trace(machine.attempt, .cache(event))
    }

    /// The stored response as a 304 (`notModified`) freshens it; as it was when the record could not be rewritten
    /// (it still answers); nil when the 304 does not match it.
    nonisolated(nonsending) private func freshen(_ lookup: HTTPCache.Lookup, from notModified: HTTPExchange) async -> HTTPCache.Lookup? {
        guard let stage else { return lookup }
        do {
            guard let fresh = try await stage.freshen(lookup, headers: notModified.headers, requestTime: sentAt, responseTime: answeredAt)
            else { return nil }
            var freshened = lookup
            freshened.stored = fresh
            return freshened
        } catch {
            trace(machine.attempt, .cache(.failed(error: error)))
            return lookup
        }
    }

    /// The answer from a stored response (fresh, stale or revalidated), to the caller or its stream.
    nonisolated(nonsending) private func answer(
        _ lookup: HTTPCache.Lookup, as kind: LoadStoredAnswer, _ counters: inout RequestExecution.Counters
    ) async throws(CourierError) -> Response {
        counters.status = lookup.stored.status
        let stored = lookup.stored
        let event: CacheEvent
        switch kind {
        case .hit: (event, cacheStatus) = (.hit, .hit)
        case .stale(let why): (event, cacheStatus) = (.stale(why: why), .stale)
        case .revalidated: (event, cacheStatus) = (.revalidated, .revalidated)
        }
        trace(machine.attempt, .cache(event))
        // A hit or a stale answer is as old as the lookup found it; a revalidated one was just freshened.
        let fields = stage?.answerHeaders(stored, age: kind == .revalidated ? nil : lookup.freshness.currentAge) ?? stored.headers
        let body = request.method == .head ? [] : stored.body
        // The stored URL is the request's own but for a redirect target's (each hop is looked up apart).
        let answerURL = stored.url == request.url ? url : HTTPURL(stored.url) ?? url
        let head = ResponseHead(status: stored.status, reason: stored.reason, headers: fields, url: answerURL, attempt: machine.attempt)
        try await execution.events?.deliverStored(head, body: body)
        timeline.doneAt = .now()
        return Response(
            status: stored.status, reason: stored.reason, headers: fields, body: body, url: answerURL,
            attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
            bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
            userInfo: request.userInfo, cache: cacheStatus
        )
    }
}
