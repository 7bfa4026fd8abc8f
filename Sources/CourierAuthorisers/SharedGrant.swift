internal import CourierCore
#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

/// The record an OAuth 2 plugin keeps in a fleet's ``SharedTokenStore``: the access token as the endpoint issued
/// it and the refresh token to use next (nil for the client-credentials grant), as compact JSON
/// (`{"v":1,"access_token":…,"token_type":…,"expires_at":…,"issued_at":…,"refresh_token":…}`). The store encrypts
/// it; nothing here prints a token.
struct SharedGrant: Sendable, Equatable {
    var token: AccessToken
    var refreshToken: String?

    /// How long a record is kept when its access token gives no bound, or when it carries a refresh token (which
    /// outlives the access token: the next refresh needs it, and every refresh writes the record again).
    static let retentionWithoutExpiry: Double = 30 * 86_400

    init(token: AccessToken, refreshToken: String? = nil) {
        self.token = token
        self.refreshToken = refreshToken
    }

    /// Whether this record's token may be used at `now`: not expiring within `margin` (as ``AccessToken`` counts
    /// it) and not the value `avoiding` (the one this process just saw refused).
    func isUsable(now: Double, margin: Double, avoiding: String?) -> Bool {
        token.value != avoiding && !token.needsRefresh(at: now, margin: margin)
    }

    /// How long the store keeps the record written at `now`.
    func retention(now: Double) -> Duration {
        let accessLeft = token.expiresAt.map { max(1, $0 - now) }
        let seconds = refreshToken == nil
            ? accessLeft ?? Self.retentionWithoutExpiry
            : max(accessLeft ?? 0, Self.retentionWithoutExpiry)
        return .milliseconds(Int64(seconds * 1000))
    }

    var encoded: [UInt8] {
        let wire = Wire(
            v: 1, accessToken: token.value, tokenType: token.type, expiresAt: token.expiresAt, issuedAt: token.issuedAt,
            refreshToken: refreshToken
        )
        // Encoding a struct of strings and finite numbers cannot fail.
        return Array((try? JSONEncoder().encode(wire)) ?? Data())
    }

    /// The record in `bytes`; nil when they are not one (another version's, or another plugin's).
    init?(decoding bytes: [UInt8]) {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(bytes)), wire.v == 1, !wire.accessToken.isEmpty,
            HTTPHeaders.isValidValue(wire.accessToken)
        else { return nil }
        token = AccessToken(value: wire.accessToken, type: wire.tokenType, expiresAt: wire.expiresAt, issuedAt: wire.issuedAt)
        refreshToken = wire.refreshToken
    }

    private struct Wire: Codable {
        var v: Int
        var accessToken: String
        var tokenType: String
        var expiresAt: Double?
        var issuedAt: Double?
        var refreshToken: String?

        enum CodingKeys: String, CodingKey {
            case v
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresAt = "expires_at"
            case issuedAt = "issued_at"
            case refreshToken = "refresh_token"
        }
    }
}
