/// A token bucket: a sustained rate and a burst size.
public struct RateLimit: Hashable, Sendable, CustomStringConvertible {
    /// Tokens added per second.
    public package(set) var requestsPerSecond: Double
    /// Bucket capacity: how many requests may go at once after a quiet period.
    public package(set) var burst: Int

    package init(requestsPerSecond: Double, burst: Int) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }

    public var description: String { "\(requestsPerSecond) req/s, burst \(burst)" }
}
