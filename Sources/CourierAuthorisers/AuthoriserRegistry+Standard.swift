public import CourierCore

extension AuthoriserRegistry {
    /// The built-in plugin types with their descriptors: static-bearer, oauth2-refresh,
    /// oauth2-client-credentials, api-key, basic and hmac-signature. Register your own on a copy:
    /// `AuthoriserRegistry.standard.registering(MyPlugin.self)`.
    public static let standard: AuthoriserRegistry = {
        var registry = AuthoriserRegistry()
        for plugin in builtInPlugins { registry.register(plugin) }
        return registry
    }()

    /// The built-in plugin types, in ``BuiltInAuthoriserTypes/all``'s order.
    public static let builtInPlugins: [any AuthoriserPlugin.Type] = [
        StaticBearerPlugin.self, OAuth2RefreshPlugin.self, OAuth2ClientCredentialsPlugin.self, APIKeyPlugin.self,
        BasicPlugin.self, HMACSignaturePlugin.self,
    ]
}
