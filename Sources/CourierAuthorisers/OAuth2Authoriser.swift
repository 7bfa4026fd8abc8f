internal import CourierCore

/// The authoriser both OAuth 2 grants make: sends `Authorization: Bearer <access token>` from a
/// ``TokenCache`` that asks the grant for a new token when there is none or it expires within `refresh-before`.
final class OAuth2Authoriser: Authoriser {
    private let cache: TokenCache

    init(cache: TokenCache) {
        self.cache = cache
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        let token = try await cache.token()
        request.headers.replaceOrAdd(name: "Authorization", value: Self.headerValue(token))
    }

    func authorisationFailed(for request: AuthorisationRequest) async {
        guard let value = request.headers["Authorization"], let space = value.firstIndex(of: " ") else { return }
        cache.authorisationFailed(tokenValue: String(value[value.index(after: space)...]))
    }

    func refresh() async throws {
        try await cache.refresh()
    }

    /// The token currently held, without refreshing (for tests and diagnostics).
    var currentToken: AccessToken? { cache.currentToken }

    /// `<type> <token>`, with the type `bearer` in any case written as RFC 6750's `Bearer`.
    static func headerValue(_ token: AccessToken) -> String {
        let type = token.type.lowercased() == "bearer" ? "Bearer" : token.type
        return "\(type) \(token.value)"
    }
}
