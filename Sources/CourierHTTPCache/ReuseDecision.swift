/// What a private cache does with a stored response for a new request (RFC 9111 §4, §4.2.4, §5.2.1; RFC 5861;
/// RFC 8246), given the stored response's ``Freshness`` and the request's and response's ``CacheControl``.
///
/// The rules, in order:
/// 1. Request `no-cache` (§5.2.1.4) or response `no-cache` (§5.2.2.4, qualified or not): revalidate.
/// 2. A fresh `immutable` response (RFC 8246 §2) is served even when the request's `max-age` or `min-fresh`
///    would reject it (a reload); only request `no-cache` (a forced reload) revalidates it.
/// 3. Request `max-age` (§5.2.1.1): an older response is revalidated, whatever `max-stale` says.
///    Request `min-fresh` (§5.2.1.3): a response fresh for less than that is revalidated.
/// 4. A fresh response is served.
/// 5. A stale response is never served when it has `must-revalidate` (§4.2.4, §5.2.2.2). Otherwise it is
///    served when the request's `max-stale` accepts its staleness (§5.2.1.2), else served while revalidating
///    in the background within the response's `stale-while-revalidate` window (RFC 5861 §3).
/// 6. Otherwise revalidate; with request `only-if-cached` (§5.2.1.7) the answer is a 504 instead.
///
/// `stale-if-error` is a separate question, asked after a revalidation or a reload failed:
/// ``staleIfErrorAllows(freshness:request:response:)``.
package enum ReuseDecision: Hashable, Sendable {
    /// Serve the stored response: it is fresh and the request's constraints accept it.
    case fresh
    /// Serve the stored response although stale: the request's `max-stale` accepts it.
    case staleAccepted
    /// Serve the stored response although stale, and revalidate it in the background (`stale-while-revalidate`).
    case staleWhileRevalidate
    /// Send a conditional request (see ``Validators``) before using the stored response.
    case revalidate
    /// The request has `only-if-cached` and the stored response cannot be used: answer 504 (Gateway Timeout).
    case unsatisfiable

    /// The decision for a stored response with `freshness` and `response` directives, for a request with
    /// `request` directives.
    package init(freshness: Freshness, request: CacheControl, response: CacheControl) {
        let decision = ReuseDecision.withoutOnlyIfCached(freshness: freshness, request: request, response: response)
        self = decision == .revalidate && request.onlyIfCached ? .unsatisfiable : decision
    }

    /// Whether the stored response may be used without contacting the origin first.
    package var servesStoredResponse: Bool {
        switch self {
        case .fresh, .staleAccepted, .staleWhileRevalidate: true
        case .revalidate, .unsatisfiable: false
        }
    }

    private static func withoutOnlyIfCached(freshness: Freshness, request: CacheControl, response: CacheControl)
        -> ReuseDecision
    {
        if request.noCache || response.noCache { return .revalidate }
        if response.immutable, freshness.isFresh { return .fresh }
        if let maxAge = request.maxAge, freshness.currentAge > Double(maxAge) { return .revalidate }
        if let minFresh = request.minFresh, freshness.remaining < Double(minFresh) { return .revalidate }
        if freshness.isFresh { return .fresh }
        if response.mustRevalidate { return .revalidate }
        if let maxStale = request.maxStale, maxStale.accepts(staleness: freshness.staleness) { return .staleAccepted }
        if let window = response.staleWhileRevalidate, freshness.staleness <= Double(window) {
            return .staleWhileRevalidate
        }
        return .revalidate
    }

    /// Whether a stale stored response may be served because the origin could not be reached or answered
    /// with a 500, 502, 503 or 504 (RFC 5861 §4; RFC 9111 §4.2.4).
    ///
    /// A fresh response always may. A stale one never may when the response has `must-revalidate` or
    /// `no-cache`, or the request has `no-cache` (§4.2.4: a cache "MUST NOT generate a stale response if it is
    /// prohibited by an explicit in-protocol directive"). Otherwise it may when its staleness is within the
    /// response's or the request's `stale-if-error` window (the larger), or the request's `max-stale` accepts it.
    package static func staleIfErrorAllows(freshness: Freshness, request: CacheControl, response: CacheControl)
        -> Bool
    {
        if freshness.isFresh { return true }
        if response.mustRevalidate || response.noCache || request.noCache { return false }
        let window = max(response.staleIfError ?? -1, request.staleIfError ?? -1)
        if window >= 0, freshness.staleness <= Double(window) { return true }
        return request.maxStale?.accepts(staleness: freshness.staleness) ?? false
    }

    /// Whether an offline loader (one that must not contact the origin) may serve a stored response: a fresh one
    /// without `no-cache`, or a stale one without `must-revalidate` or `no-cache` (§4.2.4: "A cache MUST NOT
    /// generate a stale response if it is prohibited by an explicit in-protocol directive"; a disconnected cache
    /// may otherwise serve stale responses). Such a loader fails instead of serving the others.
    package static func offlineAllows(freshness: Freshness, response: CacheControl) -> Bool {
        if response.noCache { return false }
        return freshness.isFresh || !response.mustRevalidate
    }
}
