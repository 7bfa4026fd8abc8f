/// A named authoriser declared under `authorisers:`: a plugin type and its settings.
public struct AuthoriserInstance: Hashable, Sendable {
    public var name: String
    /// The plugin type (`oauth2-refresh`).
    public var plugin: String
    /// Settings, checked against the type's ``AuthoriserTypeDescriptor``.
    public var settings: [String: PolicyValue]
    /// How long a request may wait for this authoriser (token refresh included) before it fails.
    public var timeout: Duration
    /// Whether credentials may be sent over plain http. Off by default; the loader refuses otherwise.
    public var allowPlainHTTP: Bool
    public var definedAt: SourceLocation

    public init(
        name: String,
        plugin: String,
        settings: [String: PolicyValue],
        timeout: Duration = .seconds(10),
        allowPlainHTTP: Bool = false,
        definedAt: SourceLocation
    ) {
        self.name = name
        self.plugin = plugin
        self.settings = settings
        self.timeout = timeout
        self.allowPlainHTTP = allowPlainHTTP
        self.definedAt = definedAt
    }
}
