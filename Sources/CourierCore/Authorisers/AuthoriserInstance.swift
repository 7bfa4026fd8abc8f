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
    /// Whether the instances of a fleet share this authoriser's tokens through the policy's `coordination:`
    /// backend (`share-tokens`), so that one of them refreshes and the others reuse the result. Off by default;
    /// only plugin types whose descriptor ``AuthoriserTypeDescriptor/supportsSharedTokens`` accept it.
    public var shareTokens: Bool
    public var definedAt: SourceLocation
    /// Where each value was written: `plugin`, `timeout`, `allow-plain-http`, `share-tokens` and
    /// `settings.NAME`, at the value's own line (`courier explain` cites them); a key not written is absent.
    package var origins: [String: SourceLocation] = [:]

    public init(
        name: String,
        plugin: String,
        settings: [String: PolicyValue],
        timeout: Duration = .seconds(10),
        allowPlainHTTP: Bool = false,
        shareTokens: Bool = false,
        definedAt: SourceLocation
    ) {
        self.name = name
        self.plugin = plugin
        self.settings = settings
        self.timeout = timeout
        self.allowPlainHTTP = allowPlainHTTP
        self.shareTokens = shareTokens
        self.definedAt = definedAt
    }
}
