/// One service from `services:`, with every value already merged over `defaults` (key by key).
public struct ServicePolicy: Hashable, Sendable {
    /// `http` or `https`.
    public enum Scheme: String, Hashable, Sendable, CaseIterable {
        case http, https
    }

    public package(set) var name: String
    public package(set) var hosts: [HostPattern]
    public package(set) var scheme: Scheme
    /// The name of the authoriser instance serving this service, if any.
    public package(set) var authoriser: String?
    public package(set) var rateLimit: RateLimitPolicy
    public package(set) var retry: RetryPolicy
    public package(set) var timeouts: TimeoutPolicy
    /// Alternatives per host, tried in order when that host is unreachable.
    public package(set) var fallbacks: [String: [HostAddress]]
    public package(set) var tls: TLSPolicy
    /// nil: responses are not cached.
    public package(set) var cache: CachePolicy?
    /// Whether requests to the service carry the caller's trace context (W3C `traceparent`/`tracestate`, through
    /// the tracer's injector): `propagate-trace-context`, true unless the policy says otherwise.
    public package(set) var propagatesTraceContext: Bool
    /// `proxy:` (the service's own, else the defaults'); nil when the policy names none, so the explicit proxy
    /// or the environment decides (``ProxySelection``).
    package var proxy: ProxyPolicy?
    /// Where the service is declared.
    public package(set) var definedAt: SourceLocation
    /// Where each effective value came from, keyed by its dotted key path in the language
    /// (`retry.max-attempts`, `timeouts.total`, `rate-limit.endpoints./v1/search`). A key path that is absent
    /// took the built-in default.
    public package(set) var origins: [String: SourceLocation]
    /// `connect-to: unix:/path`: the Unix domain socket every request of the service is sent over (its `Host`
    /// field still the URL's); nil connects to the URL's host.
    public package(set) var unixSocket: String?

    package init(
        name: String,
        hosts: [HostPattern],
        scheme: Scheme = .https,
        authoriser: String? = nil,
        rateLimit: RateLimitPolicy = .unlimited,
        retry: RetryPolicy = .builtIn,
        timeouts: TimeoutPolicy = .builtIn,
        fallbacks: [String: [HostAddress]] = [:],
        tls: TLSPolicy = .builtIn,
        cache: CachePolicy? = nil,
        propagatesTraceContext: Bool = true,
        definedAt: SourceLocation,
        origins: [String: SourceLocation] = [:],
        unixSocket: String? = nil,
        proxy: ProxyPolicy? = nil
    ) {
        self.proxy = proxy
        self.name = name
        self.hosts = hosts
        self.scheme = scheme
        self.authoriser = authoriser
        self.rateLimit = rateLimit
        self.retry = retry
        self.timeouts = timeouts
        self.fallbacks = fallbacks
        self.tls = tls
        self.cache = cache
        self.propagatesTraceContext = propagatesTraceContext
        self.definedAt = definedAt
        self.origins = origins
        self.unixSocket = unixSocket
    }
}
