public import CourierCore

/// `plugin: api-key`: sends the key in a header (default `X-API-Key`) or, with `query-item`, as a query item
/// appended to the URL (name and key percent-encoded, RFC 3986). `header` and `query-item` are exclusive.
public enum APIKeyPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.apiKey

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        if let (setting, message) = descriptor.crossCheck(instance.settings).first {
            throw settings.invalid(setting ?? "query-item", "conflicts: \(message)")
        }
        let key = try settings.requiredHeaderValue("key")
        guard !key.isEmpty else { throw settings.invalid("key", "is empty") }
        if let item = try settings.string("query-item") {
            guard !item.isEmpty else { throw settings.invalid("query-item", "is empty") }
            return QueryItemAuthoriser(name: item, value: key)
        }
        return HeaderAuthoriser(name: try settings.headerName("header", default: "X-API-Key"), value: key)
    }
}
