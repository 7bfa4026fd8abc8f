/// What a policy may say about one authoriser plugin type: its name (`plugin: oauth2-refresh`) and the settings
/// it accepts, so that the compiler and `courier lint` catch a misspelt or missing setting without running it.
public struct AuthoriserTypeDescriptor: Sendable {
    /// The type of a setting's value.
    public enum Kind: Hashable, Sendable, CustomStringConvertible {
        /// Any string; may embed `${env:…}` / `${file:…}` references.
        case string
        /// A credential. Literal values get a `secret-literal` warning: use a reference.
        case secret
        /// An absolute http(s) URL.
        case url
        /// A duration such as `30s`.
        case duration
        case bool
        /// A list of strings.
        case stringList
        /// An HTTP header field name (an RFC 9110 token).
        case headerName
        /// One of a fixed set of strings.
        case choice([String])

        public var description: String {
            switch self {
            case .string: return "string"
            case .secret: return "secret string"
            case .url: return "URL"
            case .duration: return "duration"
            case .bool: return "boolean"
            case .stringList: return "list of strings"
            case .headerName: return "header name"
            case .choice(let options): return "one of " + options.joined(separator: ", ")
            }
        }
    }

    /// One accepted setting.
    public struct Setting: Hashable, Sendable {
        public var name: String
        public var kind: Kind
        public var required: Bool
        /// The value used when the setting is absent (documentation and `courier explain`).
        public var defaultValue: String?
        public var summary: String

        public init(_ name: String, _ kind: Kind, required: Bool = false, default defaultValue: String? = nil, _ summary: String) {
            self.name = name
            self.kind = kind
            self.required = required
            self.defaultValue = defaultValue
            self.summary = summary
        }
    }

    /// The name policies use in `plugin:`.
    public var type: String
    public var summary: String
    public var settings: [Setting]
    /// Whether the plugin can keep its credentials in the fleet's shared token store, so that a policy may say
    /// `share-tokens: true` on its instances (the compiler refuses it otherwise). The built-in OAuth 2 types do.
    public var supportsSharedTokens: Bool
    /// Checks that span settings (e.g. "`header` and `query-item` are exclusive"); returns one message per
    /// problem, each naming the setting it is about first, as `(setting, message)`.
    public var crossCheck: @Sendable ([String: PolicyValue]) -> [(setting: String?, message: String)]

    public init(
        type: String,
        summary: String,
        settings: [Setting],
        supportsSharedTokens: Bool = false,
        crossCheck: @escaping @Sendable ([String: PolicyValue]) -> [(setting: String?, message: String)] = { _ in [] }
    ) {
        self.type = type
        self.summary = summary
        self.settings = settings
        self.supportsSharedTokens = supportsSharedTokens
        self.crossCheck = crossCheck
    }

    public func setting(named name: String) -> Setting? { settings.first { $0.name == name } }
}
