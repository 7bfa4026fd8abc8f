internal import CourierCache
internal import CourierCore
internal import CourierHTTPCache

/// The HTTP cache as one load's stage: the lookups, stores, freshenings and invalidations that the load state
/// machine's cache actions ask for, against the service's ``HTTPCache``, for one route's `cache:` policy and
/// one requester's identity. It takes no decision of its own (the RFC 9111 rules are `CourierHTTPCache`'s, when
/// to apply them the state machine's); cache failures come back as a `cache` error for the trace, and the load
/// goes on without the cache.
struct CacheStage: Sendable {
    let cache: HTTPCache
    let policy: CachePolicy
    /// Whose credentials the request carries (nil: none): such responses are filed per identity.
    let identity: String?
    /// Seconds since the Unix epoch (the service's wall clock).
    let now: @Sendable () -> Double

    private var heuristicLifetime: Double { policy.ttl.seconds }

    /// The largest streamed body kept for the cache (a whole response's body is read anyway): the service's
    /// `max-size`, at most 32 MiB.
    var streamedBodyLimit: Int { Int(min(policy.maxSize, 32 << 20)) }

    /// The stored response `request` may use and the state machine's view of it; nil when there is none.
    /// `revalidating`: a background revalidation, which revalidates even a fresh response. `removedCorrupt`: why
    /// a corrupt record the lookup read was removed.
    func lookUp(
        method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, revalidating: Bool, removedCorrupt: inout String?
    ) async throws(CourierError) -> (HTTPCache.Lookup, LoadCacheFinding)? {
        let lookup: HTTPCache.Lookup?
        do {
            lookup = try await cache.lookup(
                method: method, url: url, identity: identity, requestHeaders: headers, now: now(),
                heuristicLifetime: heuristicLifetime, removedCorrupt: &removedCorrupt
            )
        } catch {
            throw Self.failure(error, url: url)
        }
        guard let lookup else { return nil }
        let request = lookup.requestControl
        let response = lookup.stored.cacheControl
        let finding = LoadCacheFinding(
            decision: lookup.decision,
            isFresh: lookup.freshness.isFresh,
            staleIfError: ReuseDecision.staleIfErrorAllows(freshness: lookup.freshness, request: request, response: response),
            servableOffline: ReuseDecision.offlineAllows(freshness: lookup.freshness, response: response),
            // Only a revalidation asks; a fresh hit need not parse a Last-Modified date.
            hasValidators: lookup.decision == .fresh && !revalidating
                ? false : !Validators(storedHeaders: lookup.stored.headers).isEmpty
        )
        return (lookup, finding)
    }

    /// Files a response when RFC 9111 allows it; the trace event that says what happened. From a `HEAD`, the
    /// stored `GET` response is freshened instead when the validators match (§4.3.5).
    func store(
        method: HTTPMethod, url: HTTPURL, requestHeaders: HTTPHeaders, status: Int, reason: String, headers: HTTPHeaders,
        body: [UInt8], requestTime: Double, responseTime: Double, found: HTTPCache.Lookup?
    ) async -> CacheEvent {
        if method == .head {
            guard let found, (200..<300).contains(status),
                Revalidation.matches(storedHeaders: found.stored.headers, notModifiedHeaders: headers)
            else { return .notStored(reason: "a HEAD response only freshens a matching stored GET response") }
            do {
                _ = try await freshen(found, headers: headers, requestTime: requestTime, responseTime: responseTime)
            } catch {
                return .failed(error: error)
            }
            return .stored
        }
        guard Int64(body.count) <= policy.maxSize else {
            return .notStored(reason: "the body (\(body.count) bytes) is larger than the service's max-size")
        }
        let verdict: Storability
        do {
            verdict = try await cache.store(
                method: method, url: url, identity: identity, requestHeaders: requestHeaders, status: status,
                reason: reason, headers: headers, body: body, requestTime: requestTime, responseTime: responseTime,
                heuristicLifetime: heuristicLifetime
            )
        } catch {
            return .failed(error: Self.failure(error, url: url))
        }
        switch verdict {
        case .storable: return .stored
        case .notStorable(let why): return .notStored(reason: Self.describe(why))
        }
    }

    /// The stored response of `found` freshened from a 304's fields (nil: the 304 does not match it).
    func freshen(_ found: HTTPCache.Lookup, headers: HTTPHeaders, requestTime: Double, responseTime: Double)
        async throws(CourierError) -> StoredResponse?
    {
        do {
            return try await cache.freshen(
                found, notModifiedHeaders: headers, requestTime: requestTime, responseTime: responseTime,
                heuristicLifetime: heuristicLifetime
            )
        } catch {
            throw Self.failure(error, url: found.stored.url)
        }
    }

    /// Removes what an unsafe method's response invalidates (RFC 9111 §4.4).
    func invalidate(method: HTTPMethod, url: HTTPURL, status: Int, headers: HTTPHeaders) async -> CacheEvent? {
        do {
            try await cache.invalidate(method: method, url: url, status: status, responseHeaders: headers, identity: identity)
        } catch {
            return .failed(error: Self.failure(error, url: url))
        }
        return Invalidation.urls(method: method, url: url, status: status, responseHeaders: headers).isEmpty ? nil : .invalidated
    }

    /// The stored response's fields as an answer: its `Age` field set to its current age (RFC 9111 §5.1);
    /// `age` when the caller knows it (the lookup's), else computed now.
    func answerHeaders(_ stored: StoredResponse, age known: Double? = nil) -> HTTPHeaders {
        let age = known ?? Freshness.currentAge(
            headers: stored.headers, requestTime: Double(stored.requestTime) / 1e9,
            responseTime: Double(stored.responseTime) / 1e9, now: now()
        )
        var headers = stored.headers
        headers.remove(name: "Age")
        headers.add(name: "Age", value: String(Int(max(0, age).rounded(.down))))
        return headers
    }

    static func failure(_ error: CacheError, url: some CustomStringConvertible) -> CourierError {
        CourierError(.cache, "the HTTP cache failed: \(error)", url: url.description, cause: error)
    }

    static func describe(_ reason: Storability.Reason) -> String {
        switch reason {
        case .method(let method): "\(method) responses are not stored"
        case .status(let status): "status \(status) is not stored"
        case .requestNoStore: "the request has no-store"
        case .responseNoStore: "the response has no-store"
        case .mustUnderstand: "must-understand with a status this cache does not understand"
        case .authorization: "an authorised request's response without public, must-revalidate or s-maxage"
        case .varyAll: "Vary: *"
        case .noFreshness: "no explicit freshness and a status that is not heuristically cacheable"
        }
    }
}
