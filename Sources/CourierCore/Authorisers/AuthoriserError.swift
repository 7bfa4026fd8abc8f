/// Why an authoriser could not be made or could not authorise a request.
///
/// Messages name the authoriser, the setting, the variable or file, or the token endpoint's status, and never
/// contain a secret's value. New kinds may be added without breaking the API.
public struct AuthoriserError: Error, Sendable, CustomStringConvertible {
    /// The category of a failure.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No plugin type is registered under the instance's `plugin:` name.
        public static let unknownPlugin = Kind(rawValue: "unknown-plugin")
        /// A required setting is absent, or a setting has the wrong type or an unusable value.
        public static let invalidSetting = Kind(rawValue: "invalid-setting")
        /// A `${env:…}` variable is unset or a `${file:…}` file cannot be read.
        public static let missingSecret = Kind(rawValue: "missing-secret")
        /// The token endpoint could not be reached (the cause is the transport's error).
        public static let tokenRequestFailed = Kind(rawValue: "token-request-failed")
        /// The token endpoint answered with an error status.
        public static let tokenEndpointStatus = Kind(rawValue: "token-endpoint-status")
        /// The token endpoint's body is not the JSON object RFC 6749 §5.1 describes.
        public static let malformedTokenResponse = Kind(rawValue: "malformed-token-response")
        /// The token endpoint's JSON has no `access_token`.
        public static let missingAccessToken = Kind(rawValue: "missing-access-token")
        /// The request cannot be signed as configured (e.g. a signed header it lacks).
        public static let unsignableRequest = Kind(rawValue: "unsignable-request")
        /// The fleet's shared token store cannot be reached, and the policy says to fail closed rather than
        /// refresh in this process (the cause is the store's error).
        public static let sharedTokensUnavailable = Kind(rawValue: "shared-tokens-unavailable")
        /// A shared token record cannot be decrypted with this instance's key: the instances must share one
        /// token key, or the record was altered.
        public static let sharedTokenUnreadable = Kind(rawValue: "shared-token-unreadable")
        /// Another instance holds the fleet's refresh lock, and no usable record appeared within the wait.
        public static let sharedTokenWaitTimedOut = Kind(rawValue: "shared-token-wait-timed-out")

        public var description: String { rawValue }
    }

    public var kind: Kind
    /// What happened, in one sentence, without secret values.
    public var message: String
    /// The authoriser instance's name, when known.
    public var authoriser: String?
    /// The HTTP status of a token endpoint's error answer.
    public var status: Int?
    /// The lower-level error, when there is one.
    public var cause: (any Error & Sendable)?

    public init(
        _ kind: Kind,
        _ message: String,
        authoriser: String? = nil,
        status: Int? = nil,
        cause: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.authoriser = authoriser
        self.status = status
        self.cause = cause
    }

    /// A copy that names `authoriser` (kept if already set).
    public func naming(_ authoriser: String) -> AuthoriserError {
        var copy = self
        if copy.authoriser == nil { copy.authoriser = authoriser }
        return copy
    }

    /// `kind: authoriser 'name': message [cause]`.
    public var description: String {
        var s = "\(kind): "
        if let authoriser { s += "authoriser '\(authoriser)': " }
        s += message
        if let cause { s += " [\(cause)]" }
        return s
    }
}
