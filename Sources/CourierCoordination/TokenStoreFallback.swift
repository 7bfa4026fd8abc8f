/// What a ``RedisTokenStore`` does when Redis cannot be reached (down, hung, its breaker open, or refusing the
/// command).
package enum TokenStoreFallback: Sendable, Equatable {
    /// Refresh in this process, as without sharing, and write nothing. Loads go on; but with rotating refresh
    /// tokens a refresh outside the fleet's lock may present a refresh token another instance already used, and the
    /// server may then revoke the whole family (docs/fleet.md, "Shared tokens").
    case local
    /// Fail the authorisation with ``CourierCore/AuthoriserError/Kind-swift.struct/sharedTokensUnavailable``.
    case failClosed
}
