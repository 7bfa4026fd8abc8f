/// An OAuth 2 access token as a token endpoint issued it (RFC 6749 §5.1).
public struct AccessToken: Hashable, Sendable, CustomStringConvertible {
    /// The token itself (a secret: never printed by ``description``).
    public var value: String
    /// `token_type`, e.g. `Bearer`.
    public var type: String
    /// When it expires, in seconds since 1970; nil when the endpoint gave no `expires_in`.
    public var expiresAt: Double?

    public init(value: String, type: String = "Bearer", expiresAt: Double? = nil) {
        self.value = value
        self.type = type
        self.expiresAt = expiresAt
    }

    /// Whether the token should be replaced at `now`, `margin` seconds ahead of its expiry.
    public func needsRefresh(at now: Double, margin: Double) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt - margin
    }

    public var description: String {
        "AccessToken(type: \(type), expiresAt: \(expiresAt.map { String($0) } ?? "never"))"
    }
}
