/// An OAuth 2 access token as a token endpoint issued it (RFC 6749 §5.1).
public struct AccessToken: Hashable, Sendable, CustomStringConvertible {
    /// The token itself (a secret: never printed by ``description``).
    public var value: String
    /// `token_type`, e.g. `Bearer`.
    public var type: String
    /// When it expires, in seconds since 1970; nil when the endpoint gave no `expires_in`.
    public var expiresAt: Double?
    /// When it was asked for, in seconds since 1970 (nil when unknown).
    public var issuedAt: Double?

    public init(value: String, type: String = "Bearer", expiresAt: Double? = nil, issuedAt: Double? = nil) {
        self.value = value
        self.type = type
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }

    /// Whether the token should be replaced at `now`, `margin` seconds ahead of its expiry. The margin is at
    /// most half the token's lifetime, so a `refresh-before` longer than a short-lived token's `expires_in`
    /// does not make every request fetch a new token.
    public func needsRefresh(at now: Double, margin: Double) -> Bool {
        guard let expiresAt else { return false }
        var margin = margin
        if let issuedAt { margin = min(margin, max(0, expiresAt - issuedAt) / 2) }
        return now >= expiresAt - margin
    }

    public var description: String {
        "AccessToken(type: \(type), expiresAt: \(expiresAt.map { String($0) } ?? "never"))"
    }
}
