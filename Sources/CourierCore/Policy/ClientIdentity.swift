/// A client certificate for mutual TLS: the PEM certificate chain a client presents (leaf first, intermediates
/// after it) and its private key, with the key's password when the key is encrypted.
///
/// Part of ``TLSPolicy``, and so of the transport's pool key: connections made with one identity are never used
/// for a request with another. The key is read once, into the TLS context built for the policy. The password is
/// never printed: ``description`` shows the files, and the password as `<redacted>` (or as the secret references
/// a policy file wrote, `${env:NAME}`, which are not the secret).
public struct ClientIdentity: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Absolute path of the PEM file holding the certificate, then any intermediates.
    public package(set) var certificateFile: String
    /// Absolute path of the PEM private key; nil when the key is in ``certificateFile`` too.
    public package(set) var keyFile: String?
    /// The key's password: literal text in code (``init(certificateFile:keyFile:keyPassword:)``), references in a
    /// compiled policy until a data loader resolves them when it starts. nil for an unencrypted key.
    package var keyPassword: PolicyString?

    public init(certificateFile: String, keyFile: String? = nil, keyPassword: String? = nil) {
        self.init(certificateFile: certificateFile, keyFile: keyFile, password: keyPassword.map { PolicyString(literal: $0) })
    }

    package init(certificateFile: String, keyFile: String?, password: PolicyString?) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.keyPassword = password
    }

    /// The file the key is read from.
    package var effectiveKeyFile: String { keyFile ?? certificateFile }

    /// Whether the password still holds secret references (a policy's, not yet resolved).
    package var needsResolution: Bool { keyPassword.map { !$0.isLiteral } ?? false }

    /// This identity with its password's references replaced by their values.
    package func resolvingPassword<E: Error>(_ lookup: (SecretReference) throws(E) -> String) throws(E) -> ClientIdentity {
        var copy = self
        if let password = keyPassword, !password.isLiteral { copy.keyPassword = PolicyString(literal: try password.resolve(lookup)) }
        return copy
    }

    /// The password's text when it has no reference left.
    package var resolvedPassword: String? { keyPassword?.literalValue }

    /// `certificate FILE, key FILE, password <redacted>`: never the password itself.
    public var description: String {
        var parts = ["certificate \(certificateFile)"]
        if let keyFile { parts.append("key \(keyFile)") }
        if let keyPassword { parts.append("password \(RedisCoordination.redacted(keyPassword))") }
        return parts.joined(separator: ", ")
    }

    public var debugDescription: String { "ClientIdentity(\(description))" }

    /// What `dump` and the debugger show: the files only, so that a reflected ``TLSPolicy`` carries no password.
    public var customMirror: Mirror {
        Mirror(self, children: ["certificateFile": certificateFile, "keyFile": keyFile as Any, "keyPassword": keyPassword.map { RedisCoordination.redacted($0) } as Any])
    }
}
