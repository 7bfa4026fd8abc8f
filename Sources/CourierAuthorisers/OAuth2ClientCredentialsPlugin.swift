public import CourierCore

/// `plugin: oauth2-client-credentials`: the client-credentials grant (RFC 6749 §4.4).
///
/// Each refresh POSTs `grant_type=client_credentials&client_id=…[&scope=…][&audience=…]` to `token-url`, with
/// `client-id` and `client-secret` in HTTP Basic.
public enum OAuth2ClientCredentialsPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.oauth2ClientCredentials

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let endpoint = OAuth2TokenEndpoint(
            authoriser: instance.name,
            url: try settings.url("token-url"),
            clientID: try settings.requiredString("client-id"),
            clientSecret: try settings.requiredString("client-secret"),
            httpClient: context.httpClient,
            clock: context.clock
        )
        var form = [("grant_type", "client_credentials")]
        if let scope = try settings.string("scope") { form.append(("scope", scope)) }
        if let audience = try settings.string("audience") { form.append(("audience", audience)) }
        let parameters = form
        let cache = TokenCache(refreshMargin: try settings.seconds("refresh-before", default: 60), clock: context.clock) {
            try await endpoint.request(parameters).token
        }
        return OAuth2Authoriser(cache: cache)
    }
}
