/// The `defaults:` section after merging over the built-in defaults. Services merge over these, and requests
/// to hosts no service claims use them directly (with no authoriser, no rate limit and no fallbacks).
public struct PolicyDefaults: Hashable, Sendable {
    public package(set) var timeouts: TimeoutPolicy
    public package(set) var retry: RetryPolicy
    public package(set) var rateLimit: RateLimitPolicy
    /// The `propagate-trace-context` services start from (true unless `defaults:` says otherwise). Hosts no
    /// service claims never receive trace context, whatever this says: they are not known to the policy.
    public package(set) var propagatesTraceContext: Bool
    /// `defaults.proxy`: what services start from, and what hosts no service claims use.
    package var proxy: ProxyPolicy?
    /// Where each value came from (same key paths as ``ServicePolicy/origins``).
    public package(set) var origins: [String: SourceLocation]

    package init(
        timeouts: TimeoutPolicy = .builtIn,
        retry: RetryPolicy = .builtIn,
        rateLimit: RateLimitPolicy = .unlimited,
        propagatesTraceContext: Bool = true,
        origins: [String: SourceLocation] = [:],
        proxy: ProxyPolicy? = nil
    ) {
        self.proxy = proxy
        self.timeouts = timeouts
        self.retry = retry
        self.rateLimit = rateLimit
        self.propagatesTraceContext = propagatesTraceContext
        self.origins = origins
    }

    public static let builtIn = PolicyDefaults()
}
