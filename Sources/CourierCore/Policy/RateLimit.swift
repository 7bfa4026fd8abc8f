/// A token bucket: a sustained rate and a burst size, kept per process or shared by the fleet.
public struct RateLimit: Hashable, Sendable, CustomStringConvertible {
    /// Tokens added per second.
    public package(set) var requestsPerSecond: Double
    /// Bucket capacity: how many requests may go at once after a quiet period.
    public package(set) var burst: Int
    /// Whether each process keeps the bucket or the whole fleet shares it (`rate-limit.scope`).
    public package(set) var scope: RateLimitScope

    package init(requestsPerSecond: Double, burst: Int, scope: RateLimitScope = .process) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.scope = scope
    }

    public var description: String {
        "\(requestsPerSecond) req/s, burst \(burst)" + (scope == .fleet ? ", shared by the fleet" : "")
    }
}
