/// Who shares a rate limit: `rate-limit.scope` in a policy.
///
/// A `process` limit (the default) is kept by each process on its own, so N instances of a service send up to N
/// times the rate. A `fleet` limit is one budget for every instance that shares the policy's `coordination:`
/// backend (Redis), and so is a `Retry-After` pause on its endpoint key; the compiler refuses `fleet` in a policy
/// without a `coordination:` section.
public enum RateLimitScope: String, Hashable, Sendable {
    /// Each process keeps its own bucket.
    case process
    /// Every instance of the fleet shares one bucket through the coordination backend.
    case fleet
}
