/// Everything the policy says about one request: the answer of ``PolicyGraph/route(for:method:)``.
public struct Route: Sendable {
    /// Why a service was chosen.
    public enum Match: Hashable, Sendable {
        /// The host equals one of the service's exact hosts.
        case exact(HostPattern)
        /// The host matched the service's wildcard (the longest matching wildcard in the policy).
        case wildcard(HostPattern)
        /// No service claims the host; the policy's defaults apply.
        case defaults
    }

    /// The service, or nil when only the defaults apply.
    public var service: ServicePolicy?
    public var match: Match
    /// The rate-limit bucket key: host plus the first path component (`api.example.com/v1`), or host plus the
    /// matching endpoint override's prefix (`api.example.com/v1/search`).
    public var endpointKey: String
    /// The limit for ``endpointKey``; nil = unlimited.
    public var rateLimit: RateLimit?
    public var retry: RetryPolicy
    /// Whether this request's method may be retried at all under ``retry``.
    public var retriesAllowed: Bool
    public var timeouts: TimeoutPolicy
    /// Where to connect when the URL's host is unreachable, in order.
    public var fallbacks: [HostAddress]
    public var authoriser: AuthoriserInstance?
    public var tls: TLSPolicy
    public var cache: CachePolicy?
}
