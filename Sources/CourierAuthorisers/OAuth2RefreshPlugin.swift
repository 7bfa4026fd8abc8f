public import CourierCore
internal import Synchronization

/// `plugin: oauth2-refresh`: the refresh-token grant (RFC 6749 §6).
///
/// Each refresh POSTs `grant_type=refresh_token&refresh_token=…&client_id=…[&scope=…]` to `token-url`
/// (`client-secret`, when set, goes in HTTP Basic). When the endpoint rotates the refresh token, the new one is
/// used from then on (in memory only; the policy's secret is not rewritten).
public enum OAuth2RefreshPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.oauth2Refresh

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let endpoint = OAuth2TokenEndpoint(
            authoriser: instance.name,
            url: try settings.url("token-url"),
            clientID: try settings.requiredString("client-id"),
            clientSecret: try settings.string("client-secret"),
            httpClient: context.httpClient,
            clock: context.clock
        )
        let refreshToken = Mutex(try settings.requiredString("refresh-token"))
        let scope = try settings.string("scope")
        let cache = TokenCache(refreshMargin: try settings.seconds("refresh-before", default: 60), clock: context.clock) {
            var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken.withLock { $0 })]
            if let scope { form.append(("scope", scope)) }
            let grant = try await endpoint.request(form)
            if let rotated = grant.refreshToken { refreshToken.withLock { $0 = rotated } }
            return grant.token
        }
        return OAuth2Authoriser(cache: cache)
    }
}
