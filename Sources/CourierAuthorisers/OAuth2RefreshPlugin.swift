public import CourierCore
internal import CourierCrypto
internal import Synchronization

/// `plugin: oauth2-refresh`: the refresh-token grant (RFC 6749 §6).
///
/// Each refresh POSTs `grant_type=refresh_token&refresh_token=…&client_id=…[&scope=…]` to `token-url`
/// (`client-secret`, when set, goes in HTTP Basic). When the endpoint rotates the refresh token, the new one is
/// used from then on (in memory only; the policy's secret is not rewritten).
///
/// With a shared token store (``AuthoriserContext/sharedTokens``) the fleet refreshes once: the stored record
/// carries the current refresh token, which a refresh uses before this process's own.
public enum OAuth2RefreshPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.oauth2Refresh

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let url = try settings.url("token-url")
        let endpoint = OAuth2TokenEndpoint(
            authoriser: instance.name,
            url: url,
            clientID: try settings.requiredString("client-id"),
            clientSecret: try settings.string("client-secret"),
            httpClient: context.httpClient,
            clock: context.clock
        )
        let configured = try settings.requiredString("refresh-token")
        // The latest refresh token this process knows: the policy's, then each rotated one it was given or read.
        let refreshToken = Mutex(configured)
        let scope = try settings.string("scope")
        let margin = try settings.seconds("refresh-before", default: 60)
        // Two policies with the same client but different refresh tokens (different users) must not share: the
        // configured token's digest is part of the identity (which the store hashes again into its key).
        let identity = ["oauth2-refresh", "\(url)", endpoint.clientID, scope ?? "", SHA256.hex(SHA256.hash(Array(configured.utf8)))]
            .joined(separator: "\n")
        let fetch = SharedTokenSource.fetch(instance, context, identity: identity, margin: margin) { stored in
            let presented = stored?.refreshToken ?? refreshToken.withLock { $0 }
            var form = [("grant_type", "refresh_token"), ("refresh_token", presented)]
            if let scope { form.append(("scope", scope)) }
            let grant = try await endpoint.request(form)
            return SharedGrant(token: grant.token, refreshToken: grant.refreshToken ?? presented)
        }
        let cache = TokenCache(refreshMargin: margin, clock: context.clock) { avoiding in
            let grant = try await fetch(avoiding)
            if let rotated = grant.refreshToken { refreshToken.withLock { $0 = rotated } }
            return grant.token
        }
        return OAuth2Authoriser(cache: cache)
    }
}
