/// The `defaults:` section after merging over the built-in defaults. Services merge over these, and requests
/// to hosts no service claims use them directly (with no authoriser, no rate limit and no fallbacks).
public struct PolicyDefaults: Hashable, Sendable {
    public var timeouts: TimeoutPolicy
    public var retry: RetryPolicy
    public var rateLimit: RateLimitPolicy
    /// Where each value came from (same key paths as ``ServicePolicy/origins``).
    public var origins: [String: SourceLocation]

    public init(
        timeouts: TimeoutPolicy = .builtIn,
        retry: RetryPolicy = .builtIn,
        rateLimit: RateLimitPolicy = .unlimited,
        origins: [String: SourceLocation] = [:]
    ) {
        self.timeouts = timeouts
        self.retry = retry
        self.rateLimit = rateLimit
        self.origins = origins
    }

    public static let builtIn = PolicyDefaults()
}
