internal import CourierHTTPCache

/// What the owner found in the cache, judged by the RFC 9111 rules at lookup time.
struct LoadCacheFinding: Equatable {
    var decision: ReuseDecision
    var isFresh: Bool
    /// Whether the response may be served if the origin fails (`stale-if-error`, or fresh).
    var staleIfError: Bool
    /// Whether an offline load may serve it (fresh, or stale without `must-revalidate` or `no-cache`).
    var servableOffline: Bool
    /// Whether it has a validator (`ETag`, `Last-Modified`) to revalidate with.
    var hasValidators: Bool
}
