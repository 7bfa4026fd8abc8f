/// The policy's `coordination:` section: the backend a fleet of instances shares its `scope: fleet` rate limits,
/// their `Retry-After` pauses and `share-tokens` authorisers' tokens through, and what a load does while that
/// backend cannot be reached. ``PolicyGraph/coordination`` is nil when no file of the policy has the section.
public struct CoordinationPolicy: Hashable, Sendable, CustomStringConvertible {
    /// What happens to fleet limits while the backend is unreachable (`on-unavailable`).
    public enum Unavailable: String, Hashable, Sendable {
        /// Each instance enforces every fleet limit itself at its share: the rate (and burst) divided by the number
        /// of live instances it last saw. The default.
        case local
        /// Fleet limits are dropped until the backend is back (the compiler warns: nothing bounds the fleet).
        case open
        /// Loads that need the backend fail with the `coordination` error kind.
        case closed
    }

    /// The Redis server.
    public package(set) var redis: RedisCoordination
    public package(set) var onUnavailable: Unavailable
    /// Where the `coordination:` key is.
    public package(set) var definedAt: SourceLocation
    /// Where each value the section sets came from, keyed by its path below `coordination` (`redis.url`,
    /// `redis.key-prefix`, `on-unavailable`); a key that is absent took its default.
    package var origins: [String: SourceLocation]

    package init(
        redis: RedisCoordination, onUnavailable: Unavailable = .local, definedAt: SourceLocation,
        origins: [String: SourceLocation] = [:]
    ) {
        self.redis = redis
        self.onUnavailable = onUnavailable
        self.definedAt = definedAt
        self.origins = origins
    }

    public var description: String { "\(redis); on-unavailable \(onUnavailable.rawValue)" }
}
