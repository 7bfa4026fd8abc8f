import CourierCore
import CourierHTTP1
import CourierHTTPCache
import CourierPosix
import CourierTransport

#if canImport(Glibc)
import Glibc
#endif

/// Runs one request through its policy route: rate limit, authoriser, fallbacks, retries with back-off inside
/// the total deadline and the service's retry budget, Retry-After, a single refresh after a 401.
///
/// A class: an execution is handed to the request's task and kept by the loader while it runs, and a reference
/// is copied with one reference count instead of one per reference-counted field of its request.
final class RequestExecution: Sendable {
    let factory: DataLoaderFactory
    let request: Request
    let queued: ContinuousInstant
    let trace: LoaderTracer
    /// Where a streamed request's head, chunks and retries go (nil: the body is read whole).
    let events: LoadChannel?
    /// A background revalidation (`stale-while-revalidate`): it never answers from the cache.
    let revalidation: Bool

    init(
        factory: DataLoaderFactory, request: Request, queued: ContinuousInstant, events: LoadChannel? = nil,
        revalidation: Bool = false
    ) {
        self.factory = factory
        self.request = request
        self.queued = queued
        self.events = events
        self.revalidation = revalidation
        self.trace = factory.service.makeTracer(for: request)
    }

    private var service: DataLoaderService { factory.service }

    /// Wire counts over every attempt, kept when the request fails too.
    struct Counters {
        var sent: Int64 = 0
        var received: Int64 = 0
        var status: Int?
        var redirects = 0
        var attempt = 0
    }

    nonisolated(nonsending) func run() async -> Result<Response, CourierError> {
        // The first hop's route, looked up once for both the coalescing decision and the load.
        let first = HTTPURL(request.url).map { ($0, service.graph.route(for: $0, method: request.method)) }
        guard !revalidation, let key = coalescingKey(first?.1) else { return await runAlone(first) }
        while true {
            if service.coalescer.lead(key) {
                let result = await runAlone(first)
                service.coalescer.finish(key, with: result)
                return result
            }
            trace(0, .coalesced)
            switch await service.coalescer.follow(key) {
            case .shared(let result):
                // The same response, as this caller's: its own userInfo; no wire bytes of its own.
                let mine = result.map { response -> Response in
                    var copy = response
                    copy.userInfo = request.userInfo
                    copy.cache = .coalesced
                    return copy
                }
                switch mine {
                case .success(let response): trace(0, .finished(status: response.status, error: nil))
                case .failure(let error): trace(0, .finished(status: nil, error: error))
                }
                service.report(
                    Consumption(
                        url: request.url, bytesSent: 0, bytesReceived: 0, status: try? mine.get().status,
                        sourceIdentifier: request.sourceIdentifier
                    )
                )
                return mine
            case .cancelled:
                return .failure(CourierError(.cancelled, "the request was cancelled", url: request.url))
            case .runAlone:
                continue
            }
        }
    }

    /// The key under which concurrent identical loads share one exchange, or nil when this load must not: only a
    /// whole-response `GET` or `HEAD` without a body, on a route that caches (its service's `cache:`, or the
    /// service's rules for unclaimed hosts), while online.
    /// Every request field is part of the key (the response's `Vary` is not known yet), and so is the factory
    /// when the route has an authoriser (two users never share a response).
    ///
    /// The URL is taken as the caller wrote it, not normalised as the cache's key is: built for every cacheable
    /// load, fresh hits included, it must cost little, and two spellings of one URL loaded at the same instant
    /// merely do not share (each is still answered from the cache or the network on its own).
    private func coalescingKey(_ route: Route?) -> String? {
        guard events == nil, request.method == .get || request.method == .head, request.body == nil,
            request.bodyStream == nil, !factory.isOffline, let route, service.caches(route)
        else { return nil }
        // HEAD and GET answer differently (no body): unlike the cache's key, they do not coalesce together.
        var key = "\(request.method) \(request.url)"
        if let authoriser = route.authoriser { key += " #\(authoriser.name)@\(ObjectIdentifier(factory).hashValue)" }
        if !request.headers.isEmpty {
            key += "\n" + request.headers.fields.map { "\($0.name.lowercased()): \($0.value)" }.sorted().joined(separator: "\n")
        }
        return key
    }

    nonisolated(nonsending) private func runAlone(_ first: (HTTPURL, Route)?) async -> Result<Response, CourierError> {
        var counters = Counters()
        let result: Result<Response, CourierError>
        // Read while the response is at hand: binding it out of `result` below would copy the whole response.
        var answered: Int?
        var firstByte: Duration?
        do {
            let response = try await perform(request, deadline: nil, redirectsLeft: maxRedirects, first: first, &counters)
            answered = response.status
            firstByte = response.timeline.firstByte
            result = .success(response)
        } catch {
            var failure = error
            // The whole request's figures, not the last exchange's.
            failure.attempts = counters.attempt
            failure.bytesSent = counters.sent
            failure.bytesReceived = counters.received
            result = .failure(failure)
        }
        trace.completed(firstByte: firstByte, bytesSent: counters.sent, bytesReceived: counters.received)
        if let answered {
            trace(counters.attempt, .finished(status: answered, error: nil))
        } else if case .failure(let error) = result {
            trace(counters.attempt, .finished(status: nil, error: error))
        }
        service.report(
            Consumption(
                url: request.url, bytesSent: counters.sent, bytesReceived: counters.received, status: counters.status,
                sourceIdentifier: request.sourceIdentifier
            )
        )
        return result
    }

    /// Redirects the loader follows itself (for routes with an authoriser) before failing: the transport's own
    /// limit (``HTTPClientConfiguration/maxRedirects``), so both stop at the same count. 0 follows none: the 3xx
    /// is the answer.
    private var maxRedirects: Int { service.client.configuration.maxRedirects }

    /// Loads `request` (the caller's, or a redirect hop of it when `deadline` is given); `first` is its URL and
    /// route when the caller has parsed and looked them up already.
    nonisolated(nonsending) private func perform(
        _ request: Request, deadline fixedDeadline: ContinuousInstant?, redirectsLeft: Int,
        first: (HTTPURL, Route)? = nil, _ counters: inout Counters
    ) async throws(CourierError) -> Response {
        let url: HTTPURL
        let route: Route
        if let first {
            (url, route) = first
        } else {
            guard let parsed = HTTPURL(request.url) else {
                throw CourierError(.policy, "'\(request.url)' is not an absolute http or https URL", url: request.url)
            }
            (url, route) = (parsed, service.graph.route(for: parsed, method: request.method))
        }
        if fixedDeadline == nil { trace.started(request.method, route, url) }
        let retry = route.retry
        let serviceName = route.serviceName ?? ""
        let deadline = fixedDeadline ?? queued + (request.timeout ?? route.timeouts.total)
        let maxAttempts = max(1, request.maxAttempts ?? retry.maxAttempts)

        var headers = request.headers
        let retriesAllowed = route.retriesAllowed
        if !request.method.isIdempotent, retriesAllowed, let keyHeader = retry.idempotencyKeyHeader, !headers.contains(keyHeader) {
            // One key for the whole request: every attempt carries it, so the server can tell a retry from a
            // new request.
            headers.add(name: keyHeader, value: RequestExecution.makeIdempotencyKey())
        }

        if let instance = route.authoriser, url.scheme != "https", !instance.allowPlainHTTP {
            throw CourierError(
                .policy,
                "authoriser '\(instance.name)' does not send credentials over plain http (the policy can set allow-plain-http: true)",
                url: request.url
            )
        }
        /// The route's authoriser, made when the first attempt is authorised (an offline load never makes it).
        var authoriser: AuthoriserSlot?
        let (stage, cacheRole) = cacheStage(route: route)

        /// Whether this hop has counted as a request in the service's retry budget (when its first attempt goes
        /// out: a cache hit or an offline answer sends nothing and earns no retries).
        var countedInBudget = false

        var timeline = ResponseTimeline(queued: queued)
        var tried: [String] = []
        var random = SystemRandomNumberGenerator()
        var machine = LoadStateMachine(
            retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline,
            hasAuthoriser: route.authoriser != nil, cache: cacheRole, offline: factory.isOffline
        )
        /// What the current attempt sent, got and was told (the actions below read and fill them).
        let callerHeaders = headers
        func unauthorisedRequest() -> AuthorisationRequest {
            AuthorisationRequest(
                method: request.method, url: url, headers: headers, body: request.bodyStream == nil ? request.body : nil,
                hasStreamedBody: request.bodyStream != nil
            )
        }
        /// The current attempt's request as its authoriser returned it; nil until an attempt is authorised (and
        /// for every attempt of a route without an authoriser, which sends `url` and `headers` as they are).
        var authorised: AuthorisationRequest?
        /// The stored response the cache found, freshened by a 304 if there was one.
        var found: HTTPCache.Lookup?
        var cacheStatus: CacheStatus? = stage == nil ? nil : .miss
        var storeAfterBody = false
        /// The fields the current attempt sent, and when it was sent and answered (wall clock, for the cache).
        var sentHeaders = headers
        var sentAt = 0.0
        var answeredAt = 0.0
        var seenEpoch = 0
        /// When the current attempt asked the rate limiter (set before it is read).
        var arrived = queued
        /// When the machine last decided on a response or a failure (the instant its retry delays count from).
        var decidedAt = queued
        func decided() -> ContinuousInstant {
            decidedAt = .now
            return decidedAt
        }
        var exchange: AttemptExchange?
        var failure: CourierError?
        var hop: Request?

        /// Tells a stream's consumer that attempt `attempt + 1` follows.
        nonisolated(nonsending) func announceRetry(reason: String) async throws(CourierError) {
            guard let events else { return }
            guard await events.send(.retrying(attempt: machine.attempt + 1, reason: reason)) else {
                throw CourierError(.cancelled, "the request was cancelled", url: request.url)
            }
        }

        /// A failed attempt (or a streamed body that broke off): its bytes counted, the machine told.
        func attemptFailed(_ error: CourierError) -> [LoadStateMachine.Action] {
            trace.attemptFailed(error)
            counters.sent += error.bytesSent
            counters.received += error.bytesReceived
            failure = error
            return machine.failed(
                condition: error.retryCondition, kind: error.kind, cancelled: error.kind == .cancelled || CancellationScope.isCancelled,
                reason: "\(error.kind): \(error.message)", now: decided(), using: &random
            )
        }

        /// Drops the current response's streamed body (a retried, refreshed or redirected response).
        nonisolated(nonsending) func discardBody() async {
            if let exchange, case .streaming = exchange { count(await exchange.discard()) }
        }

        func count(_ metrics: RequestMetrics) {
            counters.sent += metrics.bytesSent
            counters.received += metrics.bytesReceived
        }

        /// The answer from a stored response (fresh, stale or revalidated), to the caller or its stream.
        nonisolated(nonsending) func answer(_ stored: StoredResponse, as kind: LoadStateMachine.StoredAnswer) async throws(CourierError) -> Response {
            guard let stage else { preconditionFailure("a stored answer without a cache") }
            let event: CacheEvent
            switch kind {
            case .hit: (event, cacheStatus) = (.hit, .hit)
            case .stale(let why): (event, cacheStatus) = (.stale(why: why), .stale)
            case .revalidated: (event, cacheStatus) = (.revalidated, .revalidated)
            }
            trace(machine.attempt, .cache(event))
            counters.status = stored.status
            // A hit or a stale answer is as old as the lookup found it; a revalidated one was just freshened.
            let fields = stage.answerHeaders(stored, age: kind == .revalidated ? nil : found?.freshness.currentAge)
            let body = request.method == .head ? [] : stored.body
            // The stored URL is the request's own but for a redirect target's (each hop is looked up apart).
            let answerURL = stored.url == request.url ? url : HTTPURL(stored.url) ?? url
            try await deliverStored(status: stored.status, reason: stored.reason, headers: fields, body: body, url: answerURL, attempt: machine.attempt)
            timeline.doneAt = .now
            return Response(
                status: stored.status, reason: stored.reason, headers: fields, body: body, url: answerURL,
                attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
                bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
                userInfo: request.userInfo, cache: cacheStatus
            )
        }

        /// Stores the answer (whose body is `body`) when the machine said so and RFC 9111 allows.
        nonisolated(nonsending) func store(_ answer: AttemptExchange, body: [UInt8]?) async {
            guard storeAfterBody, let stage else { return }
            guard let body else {
                trace(machine.attempt, .cache(.notStored(reason: "the streamed body is larger than \(stage.streamedBodyLimit) bytes")))
                return
            }
            let event = await stage.store(
                method: request.method, url: url, requestHeaders: sentHeaders, status: answer.status, reason: answer.reason,
                headers: answer.headers, body: body, requestTime: sentAt, responseTime: answeredAt, found: found
            )
            trace(machine.attempt, .cache(event))
        }

        var actions = machine.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .lookUpCache:
                guard let stage else { preconditionFailure("a lookup without a cache") }
                var finding: LoadStateMachine.CacheFinding?
                do {
                    if let (lookup, judged) = try await stage.lookUp(method: request.method, url: url, headers: headers, revalidating: revalidation) {
                        (found, finding) = (lookup, judged)
                    }
                } catch {
                    trace(0, .cache(.failed(error: error)))
                }
                actions += machine.cacheLookedUp(finding)

            case .cacheMiss:
                trace(machine.attempt, .cache(.miss))

            case .revalidate:
                guard let found else { preconditionFailure("a revalidation without a stored response") }
                trace(machine.attempt, .cache(.revalidating))
                headers = found.conditionalHeaders

            case .dropConditions:
                trace(machine.attempt, .cache(.miss))
                headers = callerHeaders

            case .revalidateInBackground:
                // One background revalidation per stored response at a time: a burst of loads in the
                // stale-while-revalidate window sends one conditional request, not one each.
                guard let recordKey = found?.recordKey, service.beginBackgroundRevalidation(recordKey) else { continue }
                let background = RequestExecution(
                    factory: factory, request: request, queued: .now, events: nil, revalidation: true
                )
                let service = self.service
                // It outlives this load: not ended by this load's cancellation.
                Task {
                    _ = await CancellationScope.unscoped { await background.run() }
                    service.endBackgroundRevalidation(recordKey)
                }

            case .deliverStored(let kind):
                guard let stored = found?.stored else { preconditionFailure("a stored answer without a stored response") }
                return try await answer(stored, as: kind)

            case .freshenStored:
                guard let stage, let lookup = found, let notModified = exchange else { preconditionFailure("a 304 without a stored response") }
                await discardBody()
                do {
                    let fresh = try await stage.freshen(lookup, headers: notModified.headers, requestTime: sentAt, responseTime: answeredAt)
                    if let fresh { found?.stored = fresh }
                    actions += machine.freshened(matched: fresh != nil)
                } catch {
                    // The 304 matched or not, the record could not be rewritten: the stored response still answers.
                    trace(machine.attempt, .cache(.failed(error: error)))
                    actions += machine.freshened(matched: true)
                }

            case .storeResponse:
                storeAfterBody = true

            case .invalidateStored:
                guard let stage, let answer = exchange else { preconditionFailure("an invalidation without a response") }
                if let event = await stage.invalidate(method: request.method, url: url, status: answer.status, headers: answer.headers) {
                    trace(machine.attempt, .cache(event))
                }

            case .failOffline:
                throw CourierError(.offline, "the loader is offline and nothing stored answers: no request is sent", url: request.url)

            case .answerUnsatisfiable:
                // RFC 9111 §5.2.1.7: only-if-cached and nothing usable stored.
                timeline.doneAt = .now
                return Response(
                    status: 504, reason: "Gateway Timeout", headers: HTTPHeaders(), body: [], url: url, attempts: 0,
                    retryAfter: nil, addressesTried: [], timeline: timeline, bytesSent: 0, bytesReceived: 0, redirects: 0,
                    userInfo: request.userInfo, cache: cacheStatus
                )

            case .admit:
                arrived = .now
                if !countedInBudget {
                    countedInBudget = true
                    service.recordRequest(service: serviceName, budget: retry.budget, now: arrived)
                }
                // The rate limit (and any Retry-After pause of the endpoint key) first: requests wait in order.
                counters.attempt += 1
                exchange = nil
                actions += machine.admitted(at: service.admit(key: route.endpointKey, limit: route.rateLimit, now: arrived), now: arrived)

            case .waitForRateLimit(let until):
                trace(machine.attempt, .rateLimited(key: route.endpointKey, wait: until - arrived))
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.rateLimitWait += .now - arrived
                actions += machine.rateLimitWaited()

            case .failRateLimitPastDeadline:
                throw CourierError(
                    .timeout, "the rate limit for \(route.endpointKey) would hold the request past its deadline", url: request.url
                )

            case .authorise:
                guard let instance = route.authoriser else { preconditionFailure("no authoriser to run") }
                let slot: AuthoriserSlot
                if let made = authoriser { slot = made } else { slot = try factory.authoriser(for: instance) }
                authoriser = slot
                let started = ContinuousInstant.now
                trace(machine.attempt, .authorising(authoriser: instance.name))
                seenEpoch = slot.epoch
                let made = try await RequestExecution.authorise(
                    unauthorisedRequest(), with: slot.authoriser, instance: instance, deadline: deadline
                )
                authorised = made
                timeline.authoriserWait += .now - started
                guard made.url.host == url.host, made.url.scheme == url.scheme, made.url.port == url.port else {
                    throw CourierError(.authorisation, "authoriser '\(instance.name)' changed the request's origin", url: request.url)
                }
                actions += machine.authorised()

            case .send(let attempt):
                let (sendURL, sendHeaders) = authorised.map { ($0.url, $0.headers) } ?? (url, headers)
                sentHeaders = sendHeaders
                // The wall-clock instants are the cache's (RFC 9111's request and response times) only.
                if stage != nil { sentAt = service.wallClock() }
                switch await send(request, url: sendURL, headers: sendHeaders, route: route, deadline: deadline, attempt: attempt, tried: &tried) {
                case .success(let response):
                    if stage != nil { answeredAt = service.wallClock() }
                    exchange = response
                    let metrics = response.metrics
                    // A whole response's figures are final; a streaming one's are counted when its body ends.
                    if case .whole = response { count(metrics) }
                    counters.status = response.status
                    counters.redirects += metrics.redirects
                    trace(attempt, .response(status: response.status))
                    timeline.dns = metrics.dns
                    timeline.connect = metrics.connect
                    timeline.tls = metrics.tls
                    timeline.tlsSession = metrics.tlsSession
                    timeline.firstByte = metrics.timeToFirstByte
                    let requested = response.status >= 300
                        ? response.headers["retry-after"].flatMap { RetryAfter.delay($0, now: service.wallClock()) } : nil
                    hop = maxRedirects > 0 && RedirectRule.redirectStatuses.contains(response.status)
                        ? try redirect(from: request, url: url, exchange: response) : nil
                    actions += machine.responseArrived(
                        status: response.status, retryAfter: requested, isRedirect: hop != nil, now: decided(), using: &random
                    )
                case .failure(let error):
                    actions += attemptFailed(error)
                }

            case .noteRetryAfter(let requested, let applied):
                trace(machine.attempt, .retryAfter(requested: requested, applied: applied, key: route.endpointKey))

            case .pauseEndpoint(let until):
                service.pause(key: route.endpointKey, until: until)

            case .refreshCredentials:
                guard let authoriser, let instance = route.authoriser, let authorised else {
                    preconditionFailure("no authoriser to refresh")
                }
                await discardBody()
                try await RequestExecution.reportRefused(authorised, to: authoriser.authoriser, instance: instance, deadline: deadline)
                let (role, refresh) = authoriser.beginRefresh(after: seenEpoch, url: request.url)
                trace(machine.attempt, .refreshing(authoriser: instance.name, role: role))
                try await announceRetry(reason: "status 401 (credentials refreshed)")
                let started = ContinuousInstant.now
                if let refresh {
                    try await RequestExecution.awaitRefresh(refresh, instance: instance, deadline: deadline, url: request.url)
                }
                timeline.authoriserWait += .now - started
                actions += machine.refreshed()

            case .proposeRetry:
                let now = ContinuousInstant.now
                actions += machine.budget(granted: service.tryRetry(service: serviceName, budget: retry.budget, now: now), now: now)

            case .gaveUp(let reason, let why):
                trace(machine.attempt, .givingUp(reason: reason, why: why.description))

            case .waitForRetry(let until, let reason):
                // The back-off as decided, not what is left of it once the trace runs.
                trace(machine.attempt, .retrying(reason: reason, delay: until - decidedAt))
                await discardBody()
                try await announceRetry(reason: reason)
                let before = ContinuousInstant.now
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.backoffWait += .now - before
                actions += machine.retryWaited()

            case .followRedirect:
                // Redirects are followed here, the one place for a loader's request, not by the transport: each hop
                // is routed again, so it gets its own service's rate limit, retries, TLS settings and credentials
                // (if any), and never this route's authoriser headers.
                guard let next = hop else { preconditionFailure("a redirect without a hop") }
                await discardBody()
                guard redirectsLeft > 0 else {
                    throw CourierError(.tooManyRedirects, "more than \(maxRedirects) redirects", url: request.url)
                }
                counters.redirects += 1
                return try await perform(next, deadline: deadline, redirectsLeft: redirectsLeft - 1, &counters)

            case .deliver:
                guard let answer = exchange else { preconditionFailure("nothing to deliver") }
                var body: [UInt8] = []
                switch answer {
                case .whole(let response):
                    body = response.body
                    if storeAfterBody { await store(answer, body: body) }
                case .streaming(let response):
                    switch await deliver(response, attempt: machine.attempt, keeping: storeAfterBody ? stage?.streamedBodyLimit : nil) {
                    case .success(let (final, kept)):
                        count(final)
                        if storeAfterBody { await store(answer, body: kept) }
                    case .failure(let error):
                        // The body broke off: the consumer already has part of it, so the stream is told which
                        // attempt starts the body again.
                        exchange = nil
                        actions += attemptFailed(error)
                        continue
                    }
                }
                timeline.doneAt = .now
                return Response(
                    status: answer.status, reason: answer.reason, headers: answer.headers, body: body, url: answer.url,
                    attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
                    bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
                    userInfo: request.userInfo, cache: cacheStatus
                )

            case .fail:
                guard let error = failure else { preconditionFailure("a failure without an error") }
                if error.kind == .cancelled || CancellationScope.isCancelled {
                    throw CourierError(.cancelled, "the request was cancelled", url: request.url, cause: error)
                }
                throw error
            }
        }
        preconditionFailure("the load state machine stopped without an answer")
    }

    /// One attempt: the URL's own host, then its fallbacks in order, skipping targets that are cooling down
    /// after a failure (all of them are tried when every one is cooling down). Only a resolve or connect
    /// failure moves on to the next target.
    nonisolated(nonsending) private func send(
        _ request: Request, url: HTTPURL, headers: HTTPHeaders, route: Route, deadline: ContinuousInstant,
        attempt: Int, tried: inout [String]
    ) async -> Result<AttemptExchange, CourierError> {
        var all: [(HostAddress?, String)] = []
        all.reserveCapacity(1 + route.fallbacks.count)
        all.append((nil, HostAddress.label(host: url.host, port: url.port)))
        for fallback in route.fallbacks {
            all.append((fallback, HostAddress.label(host: fallback.host, port: fallback.port ?? url.port)))
        }
        // A lone target is tried whether or not it is cooling down: nothing to filter (the usual case).
        var candidates = all
        if all.count > 1 {
            let now = ContinuousInstant.now
            candidates = all.filter { !service.isCoolingDown($0.1, now: now) }
        }
        if candidates.isEmpty {
            candidates = all
        } else if candidates.count < all.count {
            for (_, label) in all where !candidates.contains(where: { $0.1 == label }) {
                trace(attempt, .coolingDown(target: label))
            }
        }
        var last: CourierError?
        for (index, (target, label)) in candidates.enumerated() {
            let remaining = deadline - .now
            guard remaining > .zero else {
                return .failure(CourierError(.timeout, "the total deadline passed", url: request.url))
            }
            tried.append(label)
            trace(attempt, .connecting(target: label, fallback: target != nil))
            let timeouts = TimeoutPolicy(
                connect: min(route.timeouts.connect, remaining), idle: route.timeouts.idle, total: remaining
            )
            let body: HTTPRequest.Body
            if let stream = request.bodyStream {
                body = .stream(stream.makeStream())
            } else {
                body = request.body.map { .bytes($0) } ?? .none
            }
            let httpRequest = HTTPRequest(
                method: request.method, url: url, headers: trace.outgoing(headers, url: url, route: route), body: body,
                // Redirects are the loader's to follow (below), hop by hop through the policy: never the client's.
                timeouts: timeouts, maxRedirects: 0, connectTo: target, userAgent: service.userAgent,
                // Only an https URL's connection is keyed and built with TLS settings.
                tls: route.serviceName == nil || url.scheme != "https" ? nil : route.tls.overlaid(on: service.client.configuration.tls)
            )
            do {
                let exchange: AttemptExchange
                if events != nil {
                    exchange = .streaming(try await service.client.stream(httpRequest))
                } else {
                    exchange = .whole(try await service.client.executeOnCallersExecutor(httpRequest))
                }
                service.markWorking(label)
                return .success(exchange)
            } catch {
                last = error
                guard error.targetUnreachable else { return .failure(error) }
                trace(attempt, .unreachable(target: label, error: error))
                service.markFailed(label, now: .now)
                if index == candidates.count - 1 { return .failure(error) }
            }
        }
        return .failure(last ?? CourierError(.connect, "no connect target", url: request.url))
    }

    /// The next hop when `response` is a redirect: the caller's own headers (never the authoriser's), without
    /// credentials when it leaves the origin.
    private func redirect(from request: Request, url: HTTPURL, exchange: AttemptExchange) throws(CourierError) -> Request? {
        let next: Redirect?
        do {
            next = try RedirectRule.next(
                status: exchange.status, method: request.method, url: url, location: exchange.headers["location"]
            )
        } catch {
            throw CourierError(.protocol, "the server sent a bad redirect", url: request.url, cause: error)
        }
        guard let next else { return nil }
        var hop = request
        hop.url = next.url.description
        hop.method = next.method
        hop.headers = next.headers(from: request.headers)
        if !next.keepsBody {
            hop.body = nil
            hop.bodyStream = nil
        }
        return hop
    }

    /// Delivers a final attempt's head and body to the stream's consumer, at the consumer's pace. Returns the
    /// exchange's figures and, when `keeping` is given, the body if it is no larger than that (for the cache);
    /// or the failure (`cancelled` when the consumer is gone).
    nonisolated(nonsending) private func deliver(_ response: StreamingResponse, attempt: Int, keeping limit: Int?) async
        -> Result<(RequestMetrics, [UInt8]?), CourierError>
    {
        guard let events else { return .success((response.body.metrics, nil)) }
        var kept: [UInt8]? = limit == nil ? nil : []
        let head = ResponseHead(
            status: response.status, reason: response.head.reason, headers: response.headers, url: response.url,
            attempt: attempt
        )
        guard await events.send(.response(head)) else {
            response.body.cancel()
            return .failure(CourierError(.cancelled, "the request was cancelled", url: request.url))
        }
        do {
            while let chunk = try await response.body.nextChunk() {
                if let limit, kept != nil {
                    if kept!.count + chunk.count <= limit { kept!.append(contentsOf: chunk) } else { kept = nil }
                }
                guard await events.send(.chunk(Array(chunk))) else {
                    response.body.cancel()
                    var error = CourierError(.cancelled, "the request was cancelled", url: request.url)
                    error.bytesSent = response.body.metrics.bytesSent
                    error.bytesReceived = response.body.metrics.bytesReceived
                    return .failure(error)
                }
            }
        } catch {
            return .failure(error)
        }
        return .success((response.body.metrics, limit == nil ? nil : kept))
    }

    /// Hands a stored response to the stream's consumer (nothing to do for a whole-response load): its head, then
    /// its body in chunks of at most 64 KiB.
    private func deliverStored(
        status: Int, reason: String, headers: HTTPHeaders, body: [UInt8], url: HTTPURL, attempt: Int
    ) async throws(CourierError) {
        guard let events else { return }
        let head = ResponseHead(status: status, reason: reason, headers: headers, url: url, attempt: attempt)
        guard await events.send(.response(head)) else {
            throw CourierError(.cancelled, "the request was cancelled", url: request.url)
        }
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + 65_536)
            guard await events.send(.chunk(Array(body[offset..<end]))) else {
                throw CourierError(.cancelled, "the request was cancelled", url: request.url)
            }
            offset = end
        }
    }

    /// The cache stage of a load on `route`, and the part it plays (none without a cache for the route). A
    /// request with credentials (the route's authoriser, or its own `Authorization`) is filed under the
    /// factory's identity, so two users never share a response.
    private func cacheStage(route: Route) -> (CacheStage?, LoadStateMachine.CacheRole) {
        guard let policy = service.cachePolicy(for: route), let opened = service.httpCache else { return (nil, .none) }
        let cache: HTTPCache
        switch opened {
        case .success(let c): cache = c
        case .failure(let error):
            trace(0, .cache(.failed(error: error)))
            return (nil, .none)
        }
        let credentialed = route.authoriser != nil || request.headers.contains("Authorization")
        let identity = credentialed ? "\(route.authoriser?.name ?? "authorization")@\(factory.cacheIdentity)" : nil
        let stage = CacheStage(cache: cache, policy: policy, identity: identity, now: service.wallClock)
        if (request.method == .get || request.method == .head), request.body == nil, request.bodyStream == nil {
            return (stage, .lookUp(forceRevalidation: revalidation, onlyIfCached: CacheControl(request.headers).onlyIfCached))
        }
        return (stage, Invalidation.isUnsafe(request.method) ? .invalidate : .none)
    }

    // MARK: - Helpers

    nonisolated(nonsending) static func sleep(until instant: ContinuousInstant, url: String) async throws(CourierError) {
        do {
            try await CancellationScope.sleep(until: instant.instant)
        } catch {
            throw CourierError(.cancelled, "the request was cancelled", url: url)
        }
    }

    /// Runs `authorise` with the instance's timeout; the caller resumes at the timeout or on cancellation even
    /// when the plugin never answers.
    static func authorise(
        _ request: AuthorisationRequest, with authoriser: any Authoriser, instance: AuthoriserInstance,
        deadline: ContinuousInstant
    ) async throws(CourierError) -> AuthorisationRequest {
        let url = request.url.description
        let name = instance.name
        return try await race(timeout: min(instance.timeout, deadline - .now), url: url, what: "authoriser '\(name)' did not authorise the request") {
            () async throws(CourierError) -> AuthorisationRequest in
            var copy = request
            do {
                try await authoriser.authorise(&copy)
            } catch {
                throw CourierError(.authorisation, "authoriser '\(name)' failed to authorise the request", url: url, cause: error)
            }
            return copy
        }.get()
    }

    /// Tells the authoriser its credentials were refused (a 401), bounded by its timeout and the deadline as its
    /// other calls are: the load stops waiting for a plugin that never returns, and on cancellation.
    static func reportRefused(
        _ request: AuthorisationRequest, to authoriser: any Authoriser, instance: AuthoriserInstance,
        deadline: ContinuousInstant
    ) async throws(CourierError) {
        let name = instance.name
        _ = try await race(
            timeout: min(instance.timeout, deadline - .now), url: request.url.description,
            what: "authoriser '\(name)' did not take the refused credentials back"
        ) { () async throws(CourierError) -> Bool in
            await authoriser.authorisationFailed(for: request)
            return true
        }.get()
    }

    /// Waits for a (shared) refresh, bounded by the authoriser's timeout and the deadline.
    static func awaitRefresh(
        _ refresh: Task<Result<Void, CourierError>, Never>, instance: AuthoriserInstance,
        deadline: ContinuousInstant, url: String
    ) async throws(CourierError) {
        let name = instance.name
        _ = try await race(timeout: min(instance.timeout, deadline - .now), url: url, what: "authoriser '\(name)' did not refresh") {
            () async throws(CourierError) -> Bool in
            try await refresh.value.get()
            return true
        }.get()
    }

    private static func race<T: Sendable>(
        timeout: Duration, url: String, what: String,
        _ operation: @escaping @Sendable () async throws(CourierError) -> T
    ) async -> Result<T, CourierError> {
        let shot = OneShot<Result<T, CourierError>>()
        // The plugin's work may start tasks of its own that serve other loads (a shared token refresh): it runs
        // outside this load's scope, and this load stops waiting for it when cancelled.
        let work = Task {
            await CancellationScope.unscoped {
                do throws(CourierError) {
                    shot.resume(.success(try await operation()))
                } catch {
                    shot.resume(.failure(error))
                }
            }
        }
        let timer = Task {
            try? await Task.sleep(for: max(timeout, .zero))
            shot.resume(.failure(CourierError(.timeout, "\(what) within \(DurationFormat.format(timeout))", url: url)))
        }
        let result = await CancellationScope.withCancellationHandler {
            await shot.wait()
        } onCancel: {
            shot.resume(.failure(CourierError(.cancelled, "the request was cancelled", url: url)))
        }
        work.cancel()
        timer.cancel()
        return result
    }

    /// 128 random bits as 32 hex digits.
    static func makeIdempotencyKey() -> String {
        var random = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var s = ""
        for _ in 0..<2 {
            var v = random.next() as UInt64
            for _ in 0..<16 {
                s.append(digits[Int(v & 0xF)])
                v >>= 4
            }
        }
        return s
    }
}
