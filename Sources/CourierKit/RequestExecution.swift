internal import CourierCore
internal import CourierHTTP1
internal import CourierHTTPCache
internal import CourierTransport

/// Runs one request: shares it with identical loads in flight (coalescing), then loads it hop by hop (a
/// ``LoadHop`` for the caller's request and one for each redirect the ``RedirectFollower`` follows, each routed
/// through the policy on its own), and reports what it cost.
///
/// A class: an execution is handed to the request's task and kept by the loader while it runs, and a reference
/// is copied with one reference count instead of one per reference-counted field of its request.
final class RequestExecution: Sendable {
    let factory: DataLoaderFactory
    let request: Request
    let queued: Deadline
    let trace: LoaderTracer
    /// Where a streamed request's head, chunks and retries go (nil: the body is read whole).
    let events: LoadChannel?
    /// A background revalidation (`stale-while-revalidate`): it never answers from the cache.
    let revalidation: Bool

    init(
        factory: DataLoaderFactory, request: Request, queued: Deadline, events: LoadChannel? = nil,
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
        /// What the load did, for its response or its failure.
        var report = LoadReport()

        /// Adds an exchange's final figures.
        mutating func count(_ metrics: RequestMetrics) {
            sent += metrics.bytesSent
            received += metrics.bytesReceived
        }
    }

    /// Runs the request to its response, or to the failure that left it without one. The response is returned,
    /// not wrapped in a `Result`: it is hundreds of bytes, and each wrapping and unwrapping on the way back to the
    /// caller moved it once more.
    ///
    /// `run`, `runAlone` and `perform` are one async frame (inlined into their caller), not three: every frame on a
    /// load's stack is touched again on the way back from the response, when at 64 loads in flight it has long
    /// left the core's cache. The steps a plain load does not take stay out of line (`runCoalescing`).
    @inline(__always)
    nonisolated(nonsending) func run() async throws(CourierError) -> Response {
        // The first hop's route, looked up once for both the coalescing decision and the load.
        guard let url = HTTPURL(anyScheme: request.url), service.protocols.answers(url) else {
            // Quoted without its userinfo: `http://user:password@host/` is refused, and its password never printed.
            let quoted = URLUserinfo.redacted(request.url)
            let error = CourierError(
                .policy, "'\(quoted)' is not an absolute http or https URL, nor one a protocol plugin answers", url: quoted
            )
            finish(Counters(), status: nil, firstByte: nil, error: error)
            throw error
        }
        let route = service.graph.route(for: url, method: request.method)
        guard !revalidation, let key = coalescingKey(route) else { return try await runAlone(url, route) }
        return try await runCoalescing(key, url, route)
    }

    /// ``run()`` for a load that may share an identical load in flight: it leads (loads, and hands its outcome to
    /// those that follow it) or follows. Out of line, as every step that waits: its frame (a shared `Result`
    /// among other things) is no part of a load that cannot be shared.
    @inline(never)
    nonisolated(nonsending) private func runCoalescing(_ key: String, _ url: HTTPURL, _ route: Route) async throws(CourierError) -> Response {
        while true {
            if service.coalescer.lead(key) {
                let result: Result<Response, CourierError>
                do {
                    result = .success(try await runAlone(url, route))
                } catch {
                    result = .failure(error)
                }
                service.coalescer.finish(key, with: result)
                return try result.get()
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
                return try mine.get()
            case .cancelled:
                throw CourierError(.cancelled, "the request was cancelled", url: request.url)
            case .runAlone:
                continue
            }
        }
    }

    /// ``run()``'s outcome as a `Result`, for the loads whose outcome is handed to a stream, a delegate or a
    /// completion.
    nonisolated(nonsending) func result() async -> Result<Response, CourierError> {
        do {
            return .success(try await run())
        } catch {
            return .failure(error)
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
    private func coalescingKey(_ route: borrowing Route) -> String? {
        guard events == nil, request.method == .get || request.method == .head, request.body == nil,
            request.bodyStream == nil, !factory.isOffline, service.caches(route)
        else { return nil }
        // HEAD and GET answer differently (no body): unlike the cache's key, they do not coalesce together.
        var key = "\(request.method) \(request.url)"
        if let authoriser = route.authoriser { key += " #\(authoriser.name)@\(ObjectIdentifier(factory).hashValue)" }
        if !request.headers.isEmpty {
            key += "\n" + request.headers.fields.map { "\($0.name.lowercased()): \($0.value)" }.sorted().joined(separator: "\n")
        }
        return key
    }

    /// Loads the request on its own (not shared with an identical load) and reports what it cost.
    @inline(__always)
    nonisolated(nonsending) private func runAlone(_ url: consuming HTTPURL, _ route: consuming Route) async throws(CourierError) -> Response {
        var counters = Counters()
        do {
            let response = try await perform(url, route, &counters)
            finish(counters, status: response.status, firstByte: response.timeline.firstByte, error: nil)
            return response
        } catch {
            var failure = error
            // The whole request's figures, not the last exchange's.
            failure.attempts = counters.attempt
            failure.bytesSent = counters.sent
            failure.bytesReceived = counters.received
            failure.attachment = LoadReportBox(counters.report)
            finish(counters, status: nil, firstByte: nil, error: failure)
            throw failure
        }
    }

    /// The request's end, traced and reported: `status` is the answer's (nil when it failed with `error`), and the
    /// counters are the whole request's.
    private func finish(_ counters: Counters, status answered: Int?, firstByte: Duration?, error: CourierError?) {
        trace.completed(firstByte: firstByte, bytesSent: counters.sent, bytesReceived: counters.received)
        trace(counters.attempt, .finished(status: answered, error: answered == nil ? error : nil))
        service.report(
            Consumption(
                url: request.url, bytesSent: counters.sent, bytesReceived: counters.received, status: counters.status,
                sourceIdentifier: request.sourceIdentifier
            )
        )
    }

    /// Loads the request hop by hop: each redirect's next request is routed through the policy again, so it gets
    /// its own service's rate limit, retries, TLS settings and credentials (if any), and never the previous
    /// route's authoriser headers. `url` and `route` are the caller's URL, parsed, and its route.
    @inline(__always)
    nonisolated(nonsending) private func perform(
        _ url: consuming HTTPURL, _ route: consuming Route, _ counters: inout Counters
    ) async throws(CourierError) -> Response {
        trace.started(request.method, route, url)
        var follower = RedirectFollower(limit: service.maxRedirects)
        var hop = try LoadHop(self, request: request, redirected: false, url: url, route: route, deadline: nil)
        while true {
            switch try await hop.run(&counters, &follower) {
            case .answer(let response):
                return response
            case .redirect(let next):
                var request = hop.request
                request.url = next.url.description
                request.method = next.method
                request.headers = next.headers
                if !next.keepsBody {
                    request.body = nil
                    request.bodyStream = nil
                }
                let route = service.graph.route(for: next.url, method: next.method)
                hop = try LoadHop(self, request: request, redirected: true, url: next.url, route: route, deadline: hop.deadline)
            }
        }
    }

    /// Starts a background revalidation of `request`'s stored response `recordKey` (`stale-while-revalidate`): one
    /// per stored response at a time, so a burst of loads in the window sends one conditional request, not one each.
    /// `request` is the hop's (a redirect's target is stored under its own URL).
    func revalidateInBackground(_ request: Request, recordKey: String) {
        guard service.beginBackgroundRevalidation(recordKey) else { return }
        let background = RequestExecution(factory: factory, request: request, queued: service.now(), events: nil, revalidation: true)
        let service = self.service
        // It outlives this load: not ended by this load's cancellation.
        Task {
            _ = await CancellationScope.unscoped { await background.result() }
            service.endBackgroundRevalidation(recordKey)
        }
    }

    /// Tells a stream's consumer that attempt `attempt` follows (nothing to tell for a whole-response load).
    nonisolated(nonsending) func announceRetry(attempt: Int, reason: String) async throws(CourierError) {
        guard let events else { return }
        guard await events.send(.retrying(attempt: attempt, reason: reason)) else {
            throw CourierError(.cancelled, "the request was cancelled", url: request.url)
        }
    }

    /// The cache stage of a hop's `request` on `route`, and the part it plays (none without a cache for the route):
    /// the hop's own method decides it (a `POST` that a 303 turns into a `GET` is looked up and stored as one). A
    /// request with credentials (the route's authoriser, or its own `Authorization`) is filed under the factory's
    /// identity, so two users never share a response.
    func cacheStage(of request: Request, route: Route) -> (CacheStage?, LoadCacheRole) {
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

    /// Sleeps on the service's `clock` until `instant`; a cancellation is the load's `cancelled` error.
    nonisolated(nonsending) static func sleep(until instant: Deadline, on clock: LoaderClock, url: String) async throws(CourierError) {
        do {
            try await clock.sleep(until: instant)
        } catch {
            throw CourierError(.cancelled, "the request was cancelled", url: url)
        }
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
