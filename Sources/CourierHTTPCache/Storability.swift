package import CourierCore

/// Whether a private cache may store a response (RFC 9111 §3), and why not when it may not.
///
/// The rules, checked in this order (the first that fails is the reason):
/// 1. The request method is GET. HEAD responses are not stored: they carry no content to reuse for a GET, and
///    the loader uses a matching 2xx HEAD response to freshen the stored GET response instead (§4.3.5).
/// 2. The status is final and not 206 (range requests are not implemented) nor 304 (a 304 is a revalidation's
///    answer, merged by ``Revalidation``, never stored on its own).
/// 3. Neither the request nor the response has `no-store` (§5.2.1.5, §5.2.2.5).
/// 4. `must-understand` (§5.2.2.3) with a status this cache does not understand (not heuristically cacheable)
///    is not stored.
/// 5. A request with `Authorization` is stored only when the response has `public`, `must-revalidate` or
///    `s-maxage` (§3.5). The loader also keys such entries per authoriser identity.
/// 6. `Vary: *` is not stored: no later request could ever match it (§4.1).
/// 7. The response has explicit freshness (`max-age` or `Expires`, §4.2.1) or a heuristically cacheable
///    status (RFC 9110 §15.1). `private` is fine for a private cache (§5.2.2.7) but does not on its own make
///    a status storable: §3 would allow storing it, but the cache could never serve it without revalidating,
///    since heuristic freshness is only used for heuristically cacheable statuses (see ``Freshness``).
package enum Storability: Hashable, Sendable {
    /// The response may be stored.
    case storable
    /// The response must not be stored, for `reason`.
    case notStorable(Reason)

    /// Why a response is not stored.
    package enum Reason: Hashable, Sendable {
        /// The request method is not GET (§3; HEAD included, see ``Storability``).
        case method(HTTPMethod)
        /// The status is informational, 206 Partial Content or 304 Not Modified.
        case status(Int)
        /// The request has `Cache-Control: no-store` (§5.2.1.5).
        case requestNoStore
        /// The response has `Cache-Control: no-store` (§5.2.2.5).
        case responseNoStore
        /// `must-understand` with a status the cache does not understand (§5.2.2.3).
        case mustUnderstand
        /// The request has `Authorization` and the response none of `public`, `must-revalidate`, `s-maxage`
        /// (§3.5).
        case authorization
        /// The response has `Vary: *` (§4.1).
        case varyAll
        /// No explicit freshness and a status that is not heuristically cacheable (§4.2.2).
        case noFreshness
    }

    /// The statuses that are heuristically cacheable (RFC 9110 §15.1), less 206 (ranges are not implemented).
    package static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Whether the response to a `method` request with `requestHeaders`, answered with `status` and
    /// `responseHeaders`, may be stored by a private cache.
    package init(method: HTTPMethod, requestHeaders: HTTPHeaders, status: Int, responseHeaders: HTTPHeaders) {
        self = Storability.evaluate(
            method: method, requestHeaders: requestHeaders, status: status, responseHeaders: responseHeaders
        ).map(Storability.notStorable) ?? .storable
    }

    /// Whether the response may be stored.
    package var isStorable: Bool { self == .storable }

    /// The first rule the response breaks, or nil.
    private static func evaluate(
        method: HTTPMethod, requestHeaders: HTTPHeaders, status: Int, responseHeaders: HTTPHeaders
    ) -> Reason? {
        guard method == .get else { return .method(method) }
        guard status >= 200, status != 206, status != 304 else { return .status(status) }
        let request = CacheControl(requestHeaders)
        let response = CacheControl(responseHeaders)
        if request.noStore { return .requestNoStore }
        if response.noStore { return .responseNoStore }
        let heuristic = heuristicallyCacheableStatuses.contains(status)
        if response.mustUnderstand, !heuristic { return .mustUnderstand }
        if requestHeaders.contains("Authorization"),
            !(response.isPublic || response.mustRevalidate || response.sharedMaxAge != nil)
        {
            return .authorization
        }
        if HTTPCacheKey.varyNames(of: responseHeaders).contains("*") { return .varyAll }
        let explicit = response.maxAge != nil || responseHeaders.contains("Expires")
        guard explicit || heuristic else { return .noFreshness }
        return nil
    }
}
