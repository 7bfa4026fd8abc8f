import CourierCore
import CourierHTTP1
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
        self.trace = factory.service.makeTracer(url: request.url)
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
        var counters = Counters()
        let result: Result<Response, CourierError>
        do {
            result = .success(try await perform(request, deadline: nil, redirectsLeft: maxRedirects, &counters))
        } catch {
            var failure = error
            // The whole request's figures, not the last exchange's.
            failure.attempts = counters.attempt
            failure.bytesSent = counters.sent
            failure.bytesReceived = counters.received
            result = .failure(failure)
        }
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

    /// Loads `request` (the caller's, or a redirect hop of it when `deadline` is given).
    private func perform(
        _ request: Request, deadline fixedDeadline: ContinuousClock.Instant?, redirectsLeft: Int,
        _ counters: inout Counters
    ) async throws(CourierError) -> Response {
        let clock = ContinuousClock()
        if factory.isOffline {
            throw CourierError(.offline, "the loader is offline: no request is sent", url: request.url)
        }
        guard let url = HTTPURL(request.url) else {
            throw CourierError(.policy, "'\(request.url)' is not an absolute http or https URL", url: request.url)
        }
        let graph = service.graph
        let route = graph.route(for: url, method: request.method)
        if fixedDeadline == nil { trace(0, .started(method: request.method, service: route.service?.name)) }
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
        var attempt = 0
        var refreshed = false
        var retryAfter: Duration?
        var tried: [String] = []
        var random = SystemRandomNumberGenerator()
        var planner = RetryPlanner(
            retry: retry, maxAttempts: maxAttempts, retriesAllowed: retriesAllowed, deadline: deadline
        )
        var refreshRetry = false

        /// When the next attempt may go, or nil when the failure is final.
        func nextAttempt(after condition: RetryPolicy.Condition?, wait: Duration?, reason: String) -> ContinuousClock.Instant? {
            let now = clock.now
            switch planner.decide(after: condition, wait: wait, now: now, using: &random) {
            case .giveUp(let why):
                if why != .notRetryable { trace(attempt, .givingUp(reason: reason, why: why.description)) }
                return nil
            case .retry(let at):
                guard service.tryRetry(service: serviceName, budget: retry.budget, now: now) else {
                    if case .giveUp(let why) = planner.budgetRefused() {
                        trace(attempt, .givingUp(reason: reason, why: why.description))
                    }
                    return nil
                }
                planner.budgetGranted()
                trace(attempt, .retrying(reason: reason, delay: at - now))
                return at
            }
        }

        /// Tells a stream's consumer that attempt `attempt + 1` follows.
        func announceRetry(reason: String) async throws(CourierError) {
            guard let events else { return }
            guard await events.send(.retrying(attempt: attempt + 1, reason: reason)) else {
                throw CourierError(.cancelled, "the request was cancelled", url: request.url)
            }
        }

        /// Announces the retry to a stream and waits for its instant.
        func waitForRetry(until at: ContinuousClock.Instant, reason: String) async throws(CourierError) {
            try await announceRetry(reason: reason)
            let before = clock.now
            try await RequestExecution.sleep(until: at, url: request.url)
            timeline.backoffWait += clock.now - before
        }

        /// Counts a failed attempt's bytes and returns once the next attempt may start, or throws the failure
        /// when it is final (or `cancelled`).
        func retryOrThrow(_ error: CourierError) async throws(CourierError) {
            counters.sent += error.bytesSent
            counters.received += error.bytesReceived
            if error.kind == .cancelled || Task.isCancelled {
                throw CourierError(.cancelled, "the request was cancelled", url: request.url, cause: error)
            }
            let reason = "\(error.kind): \(error.message)"
            guard let at = nextAttempt(after: error.retryCondition, wait: nil, reason: reason) else {
                throw error
            }
            try await waitForRetry(until: at, reason: reason)
        }

        func count(_ metrics: RequestMetrics) {
            counters.sent += metrics.bytesSent
            counters.received += metrics.bytesReceived
        }

        while true {
            attempt += 1
            counters.attempt += 1
            planner.attemptStarted(counted: !refreshRetry)
            refreshRetry = false
            // The rate limit (and any Retry-After pause of the endpoint key) first: requests wait in order.
            let arrived = clock.now
            let admitted = service.admit(key: route.endpointKey, limit: route.rateLimit, now: arrived)
            if admitted > arrived {
                trace(attempt, .rateLimited(key: route.endpointKey, wait: admitted - arrived))
                guard admitted < deadline else {
                    throw CourierError(
                        .timeout, "the rate limit for \(route.endpointKey) would hold the request past its deadline",
                        url: request.url
                    )
                }
                try await RequestExecution.sleep(until: admitted, url: request.url)
                timeline.rateLimitWait += clock.now - arrived
            }

            var sendURL = url
            var sendHeaders = headers
            var authorised = AuthorisationRequest(
                method: request.method, url: url, headers: headers, body: request.bodyStream == nil ? request.body : nil,
                hasStreamedBody: request.bodyStream != nil
            )
            var seenEpoch = 0
            if let authoriser, let instance = route.authoriser {
                let started = clock.now
                trace(attempt, .authorising(authoriser: instance.name))
                seenEpoch = authoriser.epoch
                authorised = try await RequestExecution.authorise(
                    authorised, with: authoriser.authoriser, instance: instance, deadline: deadline
                )
                timeline.authoriserWait += clock.now - started
                guard authorised.url.host == url.host, authorised.url.scheme == url.scheme, authorised.url.port == url.port else {
                    throw CourierError(
                        .authorisation, "authoriser '\(instance.name)' changed the request's origin", url: request.url
                    )
                }
                sendURL = authorised.url
                sendHeaders = authorised.headers
            }

            let outcome = await send(
                request, url: sendURL, headers: sendHeaders, route: route, deadline: deadline, attempt: attempt,
                tried: &tried
            )
            switch outcome {
            case .success(let exchange):
                let metrics = exchange.metrics
                // A whole response's figures are final; a streaming one's are counted when its body ends.
                if case .whole = exchange { count(metrics) }
                counters.status = exchange.status
                counters.redirects += metrics.redirects
                trace(attempt, .response(status: exchange.status))
                timeline.dns = metrics.dns
                timeline.connect = metrics.connect
                timeline.tls = metrics.tls
                timeline.tlsSession = metrics.tlsSession
                timeline.firstByte = metrics.timeToFirstByte

                var wait: Duration?
                if exchange.status >= 300, let value = exchange.headers["retry-after"],
                    let asked = RetryAfter.delay(value, now: service.wallClock())
                {
                    let capped = min(asked, retry.retryAfterCap)
                    retryAfter = capped
                    trace(attempt, .retryAfter(requested: asked, applied: retry.respectRetryAfter ? capped : .zero, key: route.endpointKey))
                    if retry.respectRetryAfter {
                        service.pause(key: route.endpointKey, until: clock.now + capped)
                        wait = capped
                    }
                }

                if exchange.status == 401, let authoriser, let instance = route.authoriser, !refreshed {
                    // One refresh (shared with the other requests that got a 401 meanwhile) and one more attempt;
                    // a second 401 is the answer.
                    refreshed = true
                    refreshRetry = true
                    if case .streaming = exchange { count(await exchange.discard()) }
                    await authoriser.authoriser.authorisationFailed(for: authorised)
                    let (role, refresh) = authoriser.beginRefresh(after: seenEpoch, url: request.url)
                    trace(attempt, .refreshing(authoriser: instance.name, role: role))
                    try await announceRetry(reason: "status 401 (credentials refreshed)")
                    let started = clock.now
                    if let refresh {
                        try await RequestExecution.awaitRefresh(refresh, instance: instance, deadline: deadline, url: request.url)
                    }
                    timeline.authoriserWait += clock.now - started
                    continue
                }

                let reason = "status \(exchange.status)"
                if let at = nextAttempt(after: .status(exchange.status), wait: wait, reason: reason) {
                    if case .streaming = exchange { count(await exchange.discard()) }
                    try await waitForRetry(until: at, reason: reason)
                    continue
                }
                if maxRedirects > 0, let next = try redirect(from: request, url: url, exchange: exchange) {
                    // Redirects are followed here, the one place for a loader's request, not by the transport:
                    // each hop is routed again, so it gets its own service's rate limit, retries, TLS settings and
                    // credentials (if any), and never this route's authoriser headers.
                    if case .streaming = exchange { count(await exchange.discard()) }
                    guard redirectsLeft > 0 else {
                        throw CourierError(.tooManyRedirects, "more than \(maxRedirects) redirects", url: request.url)
                    }
                    counters.redirects += 1
                    return try await perform(next, deadline: deadline, redirectsLeft: redirectsLeft - 1, &counters)
                }

                var body: [UInt8] = []
                switch exchange {
                case .whole(let response):
                    body = response.body
                case .streaming(let response):
                    switch await deliver(response, attempt: attempt) {
                    case .success(let final):
                        count(final)
                    case .failure(let error):
                        // The body broke off: the consumer already has part of it, so the stream is told which
                        // attempt starts the body again.
                        try await retryOrThrow(error)
                        continue
                    }
                }
                timeline.done = clock.now
                return Response(
                    status: exchange.status, reason: exchange.reason, headers: exchange.headers, body: body, url: exchange.url,
                    attempts: attempt, retryAfter: retryAfter, addressesTried: tried, timeline: timeline,
                    bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
                    userInfo: request.userInfo
                )

            case .failure(let error):
                try await retryOrThrow(error)
                continue
            }
        }
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
                method: request.method, url: url, headers: headers, body: body,
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
