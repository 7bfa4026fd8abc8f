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
    /// Index into the service's hosts of the pattern that matched; -1 for the defaults.
    let patternIndex: Int

    /// The rate-limit bucket key: host plus the first path component (`api.example.com/v1`), or host plus the
    /// matching endpoint override's prefix (`api.example.com/v1/search`).
    public let endpointKey: EndpointKey
    /// The limit for ``endpointKey``; nil = unlimited.
    public let rateLimit: RateLimit?
    /// Whether this request's method may be retried at all under ``retry``.
    package let retriesAllowed: Bool
    /// Where to connect when the URL's host is unreachable, in order.
    public let fallbacks: [HostAddress]

    /// How the service was chosen (computed when asked: look-ups do not touch the patterns).
    public var match: Match {
        guard let service = entry.service, patternIndex >= 0 else { return .defaults }
        let pattern = service.hosts[patternIndex]
        return pattern.isWildcard ? .wildcard(pattern) : .exact(pattern)
    }

    /// The service, or nil when only the defaults apply. A copy of the whole service: code that needs only
    /// its name, or whether there is one, reads ``serviceName`` instead (a request's path reads it several times).
    public var service: ServicePolicy? { entry.service }
    /// The service's name, or nil when only the defaults apply (no service claims the host).
    public var serviceName: String? { entry.serviceName }
    public var retry: RetryPolicy { entry.retry }
    public var timeouts: TimeoutPolicy { entry.timeouts }
    public var authoriser: AuthoriserInstance? { entry.authoriser }
    public var tls: TLSPolicy { entry.tls }
    /// The service's `connect-to: unix:/path` socket; nil to connect to the URL's host.
    public var unixSocket: String? { entry.unixSocket }
    /// The policy's `proxy:` for this route (the service's, else the defaults'); nil when it names none.
    package var proxy: ProxyPolicy? { entry.proxy }
    public var cache: CachePolicy? { entry.cache }
    /// Whether the service has cache rules (``cache`` is not nil), without copying them.
    package var hasCachePolicy: Bool { entry.hasCachePolicy }
    /// Whether the request may carry the caller's trace context: the service's `propagate-trace-context`, and
    /// never for a host no service claims.
    public var propagatesTraceContext: Bool { entry.propagatesTraceContext }
}

/// The parts of a route that depend only on the service (or on the defaults), computed once per graph and laid
/// out so that a look-up reads this one object and, for endpoint overrides, one small array.
final class RouteEntry: Sendable {
    let service: ServicePolicy?
    let serviceName: String?
    let retry: RetryPolicy
    let timeouts: TimeoutPolicy
    let authoriser: AuthoriserInstance?
    let tls: TLSPolicy
    let unixSocket: String?
    let proxy: ProxyPolicy?
    let cache: CachePolicy?
    let hasCachePolicy: Bool
    let propagatesTraceContext: Bool
    let perEndpoint: RateLimit?
    /// Endpoint overrides, deepest first (the longest matching prefix wins); prefixes are usually short enough
    /// to be stored inline in the string, so comparing them touches no other memory.
    let endpoints: [(prefix: String, depth: Int, limit: RateLimit)]
    let fallbacks: [String: [HostAddress]]
    let hasFallbacks: Bool
    /// Bit i set: `HTTPMethod.standard[i]` may be retried (and max-attempts > 1).
    let retryMask: UInt16

    init(service: ServicePolicy, authoriser: AuthoriserInstance?) {
        self.service = service
        self.serviceName = service.name
        self.retry = service.retry
        self.timeouts = service.timeouts
        self.authoriser = authoriser
        self.tls = service.tls
        self.unixSocket = service.unixSocket
        self.proxy = service.proxy
        self.cache = service.cache
        self.hasCachePolicy = service.cache != nil
        self.propagatesTraceContext = service.propagatesTraceContext
        self.perEndpoint = service.rateLimit.perEndpoint
        self.endpoints = RouteEntry.sortedEndpoints(service.rateLimit.endpoints)
        self.fallbacks = service.fallbacks
        self.hasFallbacks = !service.fallbacks.isEmpty
        self.retryMask = RouteEntry.mask(service.retry)
    }

    init(defaults: PolicyDefaults) {
        self.service = nil
        self.serviceName = nil
        self.retry = defaults.retry
        self.timeouts = defaults.timeouts
        self.authoriser = nil
        self.tls = .builtIn
        self.unixSocket = nil
        self.proxy = defaults.proxy
        self.cache = nil
        self.hasCachePolicy = false
        self.propagatesTraceContext = false
        self.perEndpoint = defaults.rateLimit.perEndpoint
        self.endpoints = RouteEntry.sortedEndpoints(defaults.rateLimit.endpoints)
        self.fallbacks = [:]
        self.hasFallbacks = false
        self.retryMask = RouteEntry.mask(defaults.retry)
    }

    func retriesAllowed(for method: HTTPMethod) -> Bool {
        switch method.rawValue {
        case "GET": return retryMask & 1 << 0 != 0
        case "HEAD": return retryMask & 1 << 1 != 0
        case "POST": return retryMask & 1 << 2 != 0
        case "PUT": return retryMask & 1 << 3 != 0
        case "DELETE": return retryMask & 1 << 4 != 0
        default: return retry.maxAttempts > 1 && retry.allowsRetry(of: method)
        }
    }

    /// The endpoint override for `path`: the longest prefix on a segment boundary.
    func override(forPath path: String) -> (prefix: Substring, limit: RateLimit)? {
        guard !endpoints.isEmpty else { return nil }
        let utf8 = path.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        // Segment ends: the index of each slash after the first character, then the end of the path.
        var cuts: (Int, String.Index, String.Index, String.Index, String.Index) = (0, end, end, end, end)
        var slashes = 0
        var i = utf8.startIndex
        var overflow: [String.Index] = []
        while i < end {
            if utf8[i] == UInt8(ascii: "/") {
                if slashes > 0 {
                    switch slashes {
                    case 1: cuts.1 = i
                    case 2: cuts.2 = i
                    case 3: cuts.3 = i
                    case 4: cuts.4 = i
                    default: overflow.append(i)
                    }
                }
                slashes += 1
            }
            i = utf8.index(after: i)
        }
        cuts.0 = slashes
        for endpoint in endpoints where endpoint.depth <= slashes {
            // The prefix of `depth` segments ends before the (depth + 1)-th slash, or at the end of the path.
            let cut: String.Index
            switch endpoint.depth {
            case slashes: cut = end
            case 1: cut = cuts.1
            case 2: cut = cuts.2
            case 3: cut = cuts.3
            case 4: cut = cuts.4
            default: cut = overflow[endpoint.depth - 5]
            }
            let candidate = path[utf8.startIndex..<cut]
            if candidate == endpoint.prefix { return (candidate, endpoint.limit) }
        }
        return nil
    }

    private static func sortedEndpoints(_ endpoints: [String: RateLimit]) -> [(prefix: String, depth: Int, limit: RateLimit)] {
        endpoints.map { (prefix: $0.key, depth: $0.key.utf8.filter { $0 == UInt8(ascii: "/") }.count, limit: $0.value) }
            .sorted { ($0.depth, $0.prefix) > ($1.depth, $1.prefix) }
    }

    private static func mask(_ retry: RetryPolicy) -> UInt16 {
        guard retry.maxAttempts > 1 else { return 0 }
        var mask: UInt16 = 0
        for (bit, method) in [HTTPMethod.get, .head, .post, .put, .delete].enumerated() where retry.allowsRetry(of: method) {
            mask |= 1 << bit
        }
        return mask
    }
}
