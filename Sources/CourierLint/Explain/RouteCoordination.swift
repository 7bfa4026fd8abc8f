package import CourierCore

/// What a route shares with the rest of the fleet through the policy's `coordination:` backend, as
/// `courier explain` shows it: the backend (never a credential), what happens while it is unreachable, and
/// which of the route's parts use it.
package struct RouteCoordination: Hashable, Sendable, Encodable {
    /// The Redis server: `redis://host:port/db` (`rediss://` for TLS). The policy's URL holds no credential.
    package var backend: String
    /// The key prefix everything Courier writes starts with.
    package var keyPrefix: String
    /// `local`, `open` or `closed`.
    package var onUnavailable: String
    /// Whether the route's rate limit (and so its `Retry-After` pauses) is fleet-wide.
    package var sharesRateLimit: Bool
    /// The authoriser whose tokens the fleet shares, if the route's authoriser does (absent from the JSON
    /// otherwise).
    package var sharedTokensAuthoriser: String?

    /// What `route` shares through `coordination`; nil when it shares nothing.
    package init?(route: Route, coordination: CoordinationPolicy?) {
        let sharesRateLimit = route.rateLimit?.scope == .fleet
        let sharing = route.authoriser.flatMap { $0.shareTokens ? $0.name : nil }
        guard let coordination, sharesRateLimit || sharing != nil else { return nil }
        backend = coordination.redis.endpoint.description
        keyPrefix = coordination.redis.keyPrefix
        onUnavailable = coordination.onUnavailable.rawValue
        self.sharesRateLimit = sharesRateLimit
        sharedTokensAuthoriser = sharing
    }

    /// What `on-unavailable` does to this route, in a clause.
    package var whileUnavailable: String {
        switch onUnavailable {
        case "open": return "the fleet limit is dropped (on-unavailable: open)"
        case "closed": return "loads fail with the coordination error (on-unavailable: closed)"
        default: return "each instance keeps its share, the limit divided by the live instances it last saw (on-unavailable: local)"
        }
    }
}
