public import CourierCore

/// `plugin: oauth2-client-credentials`: the client-credentials grant (RFC 6749 §4.4).
///
/// Each refresh POSTs `grant_type=client_credentials&client_id=…[&scope=…][&audience=…]` to `token-url`, with
/// `client-id` and `client-secret` in HTTP Basic. With a shared token store (``AuthoriserContext/sharedTokens``)
/// the fleet asks for one token and every instance uses it.
public enum OAuth2ClientCredentialsPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.oauth2ClientCredentials

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let url = try settings.url("token-url")
        let endpoint = OAuth2TokenEndpoint(
            authoriser: instance.name,
            url: url,
            clientID: try settings.requiredString("client-id"),
            clientSecret: try settings.requiredString("client-secret"),
            httpClient: context.httpClient,
            clock: context.clock
        )
        var form = [("grant_type", "client_credentials")]
        let scope = try settings.string("scope"), audience = try settings.string("audience")
        if let scope { form.append(("scope", scope)) }
        if let audience { form.append(("audience", audience)) }
        let parameters = form
        let margin = try settings.seconds("refresh-before", default: 60)
        let identity = ["oauth2-client-credentials", "\(url)", endpoint.clientID, scope ?? "", audience ?? ""].joined(separator: "\n")
        let fetch = SharedTokenSource.fetch(instance, context, identity: identity, margin: margin) { _ in
            SharedGrant(token: try await endpoint.request(parameters).token)
        }
        let cache = TokenCache(refreshMargin: margin, clock: context.clock) { avoiding in try await fetch(avoiding).token }
        return OAuth2Authoriser(cache: cache)
    }
}
