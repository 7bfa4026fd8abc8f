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
struct RequestExecution {
    let factory: DataLoaderFactory
    let request: Request
    let queued: ContinuousClock.Instant
    let trace: LoaderTracer
    /// Where a streamed request's head, chunks and retries go (nil: the body is read whole).
    let events: LoadChannel?

    init(factory: DataLoaderFactory, request: Request, queued: ContinuousClock.Instant, events: LoadChannel? = nil) {
        self.factory = factory
        self.request = request
        self.queued = queued
        self.events = events
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

    func run() async -> Result<Response, CourierError> {
        // The first hop's route, looked up once for both the coalescing decision and the load.
        let first = HTTPURL(request.url).map { ($0, service.graph.route(for: $0, method: request.method)) }
        guard let key = coalescingKey(first) else { return await runAlone(first?.1) }
        while true {
            if service.coalescer.lead(key) {
                let result = await runAlone(first?.1)
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
    /// whole-response `GET` or `HEAD` without a body, on a route whose service caches (`cache:`), while online.
    /// Every request field is part of the key (the response's `Vary` is not known yet), and so is the factory
    /// when the route has an authoriser (two users never share a response).
    private func coalescingKey(_ first: (HTTPURL, Route)?) -> String? {
        guard events == nil, request.method == .get || request.method == .head, request.body == nil,
            request.bodyStream == nil, !factory.isOffline, let (url, route) = first, route.cache != nil
        else { return nil }
        let identity = route.authoriser.map { "\($0.name)@\(ObjectIdentifier(factory).hashValue)" }
        let fields = request.headers.fields
            .map { "\($0.name.lowercased()): \($0.value)" }
            .sorted()
            .joined(separator: "\n")
        // HEAD and GET answer differently (no body): unlike the cache's key, they do not coalesce together.
        return "\(request.method) " + HTTPCacheKey(method: request.method, url: url, identity: identity).primary + "\n" + fields
    }

    private func runAlone(_ firstRoute: Route?) async -> Result<Response, CourierError> {
        var counters = Counters()
        let result: Result<Response, CourierError>
        do {
            result = .success(try await perform(request, deadline: nil, redirectsLeft: maxRedirects, route: firstRoute, &counters))
        } catch {
            var failure = error
            // The whole request's figures, not the last exchange's.
            failure.attempts = counters.attempt
            failure.bytesSent = counters.sent
            failure.bytesReceived = counters.received
            result = .failure(failure)
        }
        trace.completed(result, bytesSent: counters.sent, bytesReceived: counters.received)
        switch result {
        case .success(let response): trace(counters.attempt, .finished(status: response.status, error: nil))
        case .failure(let error): trace(counters.attempt, .finished(status: nil, error: error))
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

    /// Loads `request` (the caller's, or a redirect hop of it when `deadline` is given); `route` is its route
    /// when the caller has looked it up already.
    private func perform(
        _ request: Request, deadline fixedDeadline: ContinuousClock.Instant?, redirectsLeft: Int,
        route knownRoute: Route? = nil, _ counters: inout Counters
    ) async throws(CourierError) -> Response {
        let clock = ContinuousClock()
        if factory.isOffline {
            throw CourierError(.offline, "the loader is offline: no request is sent", url: request.url)
        }
        guard let url = HTTPURL(request.url) else {
            throw CourierError(.policy, "'\(request.url)' is not an absolute http or https URL", url: request.url)
        }
        let route = knownRoute ?? service.graph.route(for: url, method: request.method)
        if fixedDeadline == nil { trace.started(request.method, route) }
        let retry = route.retry
        let serviceName = route.service?.name ?? ""
        let deadline = fixedDeadline ?? queued + (request.timeout ?? route.timeouts.total)
        let maxAttempts = max(1, request.maxAttempts ?? retry.maxAttempts)

        var headers = request.headers
        let retriesAllowed = route.retriesAllowed
        if !request.method.isIdempotent, retriesAllowed, let keyHeader = retry.idempotencyKeyHeader, !headers.contains(keyHeader) {
            // One key for the whole request: every attempt carries it, so the server can tell a retry from a
            // new request.
            headers.add(name: keyHeader, value: RequestExecution.makeIdempotencyKey())
        }

        var authoriser: AuthoriserSlot?
        if let instance = route.authoriser {
            guard url.scheme == "https" || instance.allowPlainHTTP else {
                throw CourierError(
                    .policy,
                    "authoriser '\(instance.name)' does not send credentials over plain http (the policy can set allow-plain-http: true)",
                    url: request.url
                )
            }
            authoriser = try factory.authoriser(for: instance)
        }

        service.recordRequest(service: serviceName, budget: retry.budget, now: clock.now)

        var timeline = ResponseTimeline(queued: queued)
        var tried: [String] = []
        var random = SystemRandomNumberGenerator()
        var machine = LoadStateMachine(
            retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline,
            hasAuthoriser: authoriser != nil
        )
        /// What the current attempt sent, got and was told (the actions below read and fill them).
        let unauthorised = AuthorisationRequest(
            method: request.method, url: url, headers: headers, body: request.bodyStream == nil ? request.body : nil,
            hasStreamedBody: request.bodyStream != nil
        )
        var authorised = unauthorised
        var seenEpoch = 0
        var arrived = clock.now
        var exchange: AttemptExchange?
        var failure: CourierError?
        var hop: Request?

        /// Tells a stream's consumer that attempt `attempt + 1` follows.
        func announceRetry(reason: String) async throws(CourierError) {
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
                condition: error.retryCondition, cancelled: error.kind == .cancelled || Task.isCancelled,
                reason: "\(error.kind): \(error.message)", now: clock.now, using: &random
            )
        }

        /// Drops the current response's streamed body (a retried, refreshed or redirected response).
        func discardBody() async {
            if let exchange, case .streaming = exchange { count(await exchange.discard()) }
        }

        func count(_ metrics: RequestMetrics) {
            counters.sent += metrics.bytesSent
            counters.received += metrics.bytesReceived
        }

        var actions = machine.start()
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .admit:
                // The rate limit (and any Retry-After pause of the endpoint key) first: requests wait in order.
                counters.attempt += 1
                exchange = nil
                arrived = clock.now
                actions += machine.admitted(at: service.admit(key: route.endpointKey, limit: route.rateLimit, now: arrived), now: arrived)

            case .waitForRateLimit(let until):
                trace(machine.attempt, .rateLimited(key: route.endpointKey, wait: until - arrived))
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.rateLimitWait += clock.now - arrived
                actions += machine.rateLimitWaited()

            case .failRateLimitPastDeadline:
                throw CourierError(
                    .timeout, "the rate limit for \(route.endpointKey) would hold the request past its deadline", url: request.url
                )

            case .authorise:
                guard let authoriser, let instance = route.authoriser else { preconditionFailure("no authoriser to run") }
                let started = clock.now
                trace(machine.attempt, .authorising(authoriser: instance.name))
                seenEpoch = authoriser.epoch
                authorised = try await RequestExecution.authorise(
                    unauthorised, with: authoriser.authoriser, instance: instance, deadline: deadline
                )
                timeline.authoriserWait += clock.now - started
                guard authorised.url.host == url.host, authorised.url.scheme == url.scheme, authorised.url.port == url.port else {
                    throw CourierError(.authorisation, "authoriser '\(instance.name)' changed the request's origin", url: request.url)
                }
                actions += machine.authorised()

            case .send(let attempt):
                let (sendURL, sendHeaders) = authoriser == nil ? (url, headers) : (authorised.url, authorised.headers)
                switch await send(request, url: sendURL, headers: sendHeaders, route: route, deadline: deadline, attempt: attempt, tried: &tried) {
                case .success(let response):
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
                        status: response.status, retryAfter: requested, isRedirect: hop != nil, now: clock.now, using: &random
                    )
                case .failure(let error):
                    actions += attemptFailed(error)
                }

            case .noteRetryAfter(let requested, let applied):
                trace(machine.attempt, .retryAfter(requested: requested, applied: applied, key: route.endpointKey))

            case .pauseEndpoint(let until):
                service.pause(key: route.endpointKey, until: until)

            case .refreshCredentials:
                guard let authoriser, let instance = route.authoriser else { preconditionFailure("no authoriser to refresh") }
                await discardBody()
                await authoriser.authoriser.authorisationFailed(for: authorised)
                let (role, refresh) = authoriser.beginRefresh(after: seenEpoch, url: request.url)
                trace(machine.attempt, .refreshing(authoriser: instance.name, role: role))
                try await announceRetry(reason: "status 401 (credentials refreshed)")
                let started = clock.now
                if let refresh {
                    try await RequestExecution.awaitRefresh(refresh, instance: instance, deadline: deadline, url: request.url)
                }
                timeline.authoriserWait += clock.now - started
                actions += machine.refreshed()

            case .proposeRetry:
                let now = clock.now
                actions += machine.budget(granted: service.tryRetry(service: serviceName, budget: retry.budget, now: now), now: now)

            case .gaveUp(let reason, let why):
                trace(machine.attempt, .givingUp(reason: reason, why: why.description))

            case .waitForRetry(let until, let reason):
                trace(machine.attempt, .retrying(reason: reason, delay: until - clock.now))
                await discardBody()
                try await announceRetry(reason: reason)
                let before = clock.now
                try await RequestExecution.sleep(until: until, url: request.url)
                timeline.backoffWait += clock.now - before
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
                case .streaming(let response):
                    switch await deliver(response, attempt: machine.attempt) {
                    case .success(let final):
                        count(final)
                    case .failure(let error):
                        // The body broke off: the consumer already has part of it, so the stream is told which
                        // attempt starts the body again.
                        exchange = nil
                        actions += attemptFailed(error)
                        continue
                    }
                }
                timeline.done = clock.now
                return Response(
                    status: answer.status, reason: answer.reason, headers: answer.headers, body: body, url: answer.url,
                    attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
                    bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
                    userInfo: request.userInfo
                )

            case .fail:
                guard let error = failure else { preconditionFailure("a failure without an error") }
                if error.kind == .cancelled || Task.isCancelled {
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
    private func send(
        _ request: Request, url: HTTPURL, headers: HTTPHeaders, route: Route, deadline: ContinuousClock.Instant,
        attempt: Int, tried: inout [String]
    ) async -> Result<AttemptExchange, CourierError> {
        let clock = ContinuousClock()
        let all: [(HostAddress?, String)] = [(nil, HostAddress(host: url.host, port: url.port).description)]
            + route.fallbacks.map { ($0, HostAddress(host: $0.host, port: $0.port ?? url.port).description) }
        let now = clock.now
        var candidates = all.filter { !service.isCoolingDown($0.1, now: now) }
        if candidates.isEmpty {
            candidates = all
        } else if candidates.count < all.count {
            for (_, label) in all where !candidates.contains(where: { $0.1 == label }) {
                trace(attempt, .coolingDown(target: label))
            }
        }
        var last = CourierError(.connect, "no connect target", url: request.url)
        for (index, (target, label)) in candidates.enumerated() {
            let remaining = deadline - clock.now
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
                tls: route.service == nil ? nil : route.tls.overlaid(on: service.client.configuration.tls)
            )
            do {
                let exchange: AttemptExchange
                if events != nil {
                    exchange = .streaming(try await service.client.stream(httpRequest))
                } else {
                    exchange = .whole(try await service.client.execute(httpRequest))
                }
                service.markWorking(label)
                return .success(exchange)
            } catch {
                last = error
                guard error.targetUnreachable else { return .failure(error) }
                trace(attempt, .unreachable(target: label, error: error))
                service.markFailed(label, now: clock.now)
                if index == candidates.count - 1 { return .failure(error) }
            }
        }
        return .failure(last)
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
    /// exchange's figures, or the failure (`cancelled` when the consumer is gone).
    private func deliver(_ response: StreamingResponse, attempt: Int) async -> Result<RequestMetrics, CourierError> {
        guard let events else { return .success(response.body.metrics) }
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
        return .success(response.body.metrics)
    }

    // MARK: - Helpers

    static func sleep(until instant: ContinuousClock.Instant, url: String) async throws(CourierError) {
        do {
            try await Task.sleep(until: instant, clock: ContinuousClock())
        } catch {
            throw CourierError(.cancelled, "the request was cancelled", url: url)
        }
    }

    /// Runs `authorise` with the instance's timeout; the caller resumes at the timeout or on cancellation even
    /// when the plugin never answers.
    static func authorise(
        _ request: AuthorisationRequest, with authoriser: any Authoriser, instance: AuthoriserInstance,
        deadline: ContinuousClock.Instant
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

    /// Waits for a (shared) refresh, bounded by the authoriser's timeout and the deadline.
    static func awaitRefresh(
        _ refresh: Task<Result<Void, CourierError>, Never>, instance: AuthoriserInstance,
        deadline: ContinuousClock.Instant, url: String
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
        let work = Task {
            do throws(CourierError) {
                shot.resume(.success(try await operation()))
            } catch {
                shot.resume(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: max(timeout, .zero))
            shot.resume(.failure(CourierError(.timeout, "\(what) within \(DurationFormat.format(timeout))", url: url)))
        }
        let result = await withTaskCancellationHandler {
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
