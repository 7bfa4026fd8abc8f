public import CourierCore

/// `plugin: static-bearer`: sends `<header>: <prefix><token>` (default `Authorization: Bearer <token>`).
public enum StaticBearerPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.staticBearer

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let token = try settings.requiredHeaderValue("token")
        guard !token.isEmpty else { throw settings.invalid("token", "is empty") }
        let prefix = try settings.headerValue("prefix") ?? "Bearer "
        return HeaderAuthoriser(name: try settings.headerName("header", default: "Authorization"), value: prefix + token)
    }
}
