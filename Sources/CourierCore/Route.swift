/// Everything the policy says about one request: the answer of ``PolicyGraph/route(for:method:)``.
///
/// A route is cheap to make and copy: the per-service parts are shared (one reference), and only the
/// endpoint key, its limit and the fallback list are computed per look-up.
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

    let entry: RouteEntry

    public let match: Match
    /// The rate-limit bucket key: host plus the first path component (`api.example.com/v1`), or host plus the
    /// matching endpoint override's prefix (`api.example.com/v1/search`).
    public let endpointKey: String
    /// The limit for ``endpointKey``; nil = unlimited.
    public let rateLimit: RateLimit?
    /// Whether this request's method may be retried at all under ``retry``.
    public let retriesAllowed: Bool
    /// Where to connect when the URL's host is unreachable, in order.
    public let fallbacks: [HostAddress]

    /// The service, or nil when only the defaults apply.
    public var service: ServicePolicy? { entry.service }
    public var retry: RetryPolicy { entry.retry }
    public var timeouts: TimeoutPolicy { entry.timeouts }
    public var authoriser: AuthoriserInstance? { entry.authoriser }
    public var tls: TLSPolicy { entry.tls }
    public var cache: CachePolicy? { entry.cache }
}

/// The parts of a route that depend only on the service (or on the defaults), computed once per graph.
final class RouteEntry: Sendable {
    let service: ServicePolicy?
    let retry: RetryPolicy
    let timeouts: TimeoutPolicy
    let authoriser: AuthoriserInstance?
    let tls: TLSPolicy
    let cache: CachePolicy?
    let perEndpoint: RateLimit?
    /// Endpoint overrides by path prefix, keyed by Substring so a look-up allocates nothing.
    let endpoints: [Substring: (prefix: String, limit: RateLimit)]
    /// The segment counts of the endpoint keys, deepest first: only prefixes of these depths are probed.
    let endpointDepths: [Int]
    let fallbacks: [String: [HostAddress]]
    /// Whether retries are possible at all (max-attempts > 1).
    let retries: Bool
    /// The standard methods that may be retried; a short list compares faster than a set hashes.
    let retryableStandardMethods: [HTTPMethod]

    init(service: ServicePolicy, authoriser: AuthoriserInstance?) {
        self.service = service
        self.retry = service.retry
        self.timeouts = service.timeouts
        self.authoriser = authoriser
        self.tls = service.tls
        self.cache = service.cache
        self.perEndpoint = service.rateLimit.perEndpoint
        var endpoints: [Substring: (prefix: String, limit: RateLimit)] = [:]
        for (prefix, limit) in service.rateLimit.endpoints { endpoints[Substring(prefix)] = (prefix, limit) }
        self.endpoints = endpoints
        self.endpointDepths = RouteEntry.depths(of: endpoints.keys)
        self.fallbacks = service.fallbacks
        self.retries = service.retry.maxAttempts > 1
        self.retryableStandardMethods = RouteEntry.retryable(service.retry)
    }

    init(defaults: PolicyDefaults) {
        self.service = nil
        self.retry = defaults.retry
        self.timeouts = defaults.timeouts
        self.authoriser = nil
        self.tls = .builtIn
        self.cache = nil
        self.perEndpoint = defaults.rateLimit.perEndpoint
        var endpoints: [Substring: (prefix: String, limit: RateLimit)] = [:]
        for (prefix, limit) in defaults.rateLimit.endpoints { endpoints[Substring(prefix)] = (prefix, limit) }
        self.endpoints = endpoints
        self.endpointDepths = RouteEntry.depths(of: endpoints.keys)
        self.fallbacks = [:]
        self.retries = defaults.retry.maxAttempts > 1
        self.retryableStandardMethods = RouteEntry.retryable(defaults.retry)
    }

    func retriesAllowed(for method: HTTPMethod) -> Bool {
        guard retries else { return false }
        for m in retryableStandardMethods where m == method { return true }
        return !HTTPMethod.standard.contains(method) && retry.allowsRetry(of: method)
    }

    /// The endpoint override for `path`: the longest prefix on a segment boundary. Only the depths that some
    /// endpoint key has are probed, so a look-up costs one hash probe per distinct depth (usually one).
    func override(forPath path: String) -> (prefix: String, limit: RateLimit)? {
        guard !endpoints.isEmpty else { return nil }
        let utf8 = path.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        for depth in endpointDepths {
            // The prefix of `depth` segments ends at the (depth + 1)-th slash, or at the end of the path.
            var slashes = 0
            var cut: String.Index?
            var i = utf8.startIndex
            while i < end {
                if utf8[i] == UInt8(ascii: "/") {
                    slashes += 1
                    if slashes == depth + 1 {
                        cut = i
                        break
                    }
                }
                i = utf8.index(after: i)
            }
            if cut == nil && slashes == depth { cut = end }
            if let cut, let hit = endpoints[path[utf8.startIndex..<cut]] { return hit }
        }
        return nil
    }

    /// Distinct segment counts (`/v1/search` has 2), deepest first.
    static func depths(of keys: some Sequence<Substring>) -> [Int] {
        Set(keys.map { key in key.utf8.filter { $0 == UInt8(ascii: "/") }.count }).sorted(by: >)
    }

    private static func retryable(_ retry: RetryPolicy) -> [HTTPMethod] {
        HTTPMethod.standard.filter { retry.allowsRetry(of: $0) }
    }
}
