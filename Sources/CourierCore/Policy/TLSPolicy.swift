/// TLS rules for a service's hosts.
public struct TLSPolicy: Hashable, Sendable {
    /// The lowest TLS version accepted.
    public enum Version: String, Hashable, Sendable, CaseIterable, Comparable {
        case tls12 = "1.2"
        case tls13 = "1.3"
        public static func < (a: Version, b: Version) -> Bool { a.rawValue < b.rawValue }
    }

    /// A public-key pin: the SHA-256 of a certificate's SubjectPublicKeyInfo (32 bytes), written
    /// `sha256/<base64>` in policy files as in HPKP and OkHttp.
    public struct Pin: Hashable, Sendable, CustomStringConvertible {
        public package(set) var sha256: [UInt8]
        public init(sha256: [UInt8]) { self.sha256 = sha256 }
        public var description: String { "sha256/" + Base64.encode(sha256) }

        /// Parses `sha256/<base64 of 32 bytes>`; nil for anything else.
        public init?(_ text: String) {
            guard text.hasPrefix("sha256/"), let bytes = Base64.decode(String(text.dropFirst(7))), bytes.count == 32 else {
                return nil
            }
            self.sha256 = bytes
        }
    }

    /// Accepted pins; the handshake fails unless one key in the chain matches one of them. Empty = no pinning.
    public package(set) var pins: [Pin]
    /// Absolute path of a PEM bundle of trusted CAs that replaces the system store; nil = system store.
    public package(set) var caFile: String?
    public package(set) var minVersion: Version
    /// Whether the server's chain and name are verified. Only code and `courier fetch --insecure` turn this off
    /// (a policy file cannot); pins are still checked, against the chain the server sent.
    public package(set) var verifiesPeer: Bool
    /// The certificate this client presents when a server asks for one (mutual TLS); nil presents none.
    public package(set) var clientIdentity: ClientIdentity?

    public init(
        pins: [Pin] = [], caFile: String? = nil, minVersion: Version = .tls12, verifiesPeer: Bool = true,
        clientIdentity: ClientIdentity? = nil
    ) {
        self.pins = pins
        self.caFile = caFile
        self.minVersion = minVersion
        self.verifiesPeer = verifiesPeer
        self.clientIdentity = clientIdentity
    }

    public static let builtIn = TLSPolicy()

    /// Whether the client key's password still holds a policy's secret references.
    package var needsSecrets: Bool { clientIdentity?.needsResolution ?? false }

    /// These settings with the client key's password resolved through `secrets` (what a data loader does when it
    /// first uses a route's settings).
    package func resolvingSecrets(_ secrets: SecretResolver) throws(AuthoriserError) -> TLSPolicy {
        guard let identity = clientIdentity, identity.needsResolution else { return self }
        var copy = self
        copy.clientIdentity = try identity.resolvingPassword { (reference) throws(AuthoriserError) in try secrets.resolve(reference) }
        return copy
    }

    /// These settings over `base` (a client's defaults): this policy's CA file, pins and client identity where it
    /// names any, else the base's; the higher of the two minimum versions; verification only when both verify.
    package func overlaid(on base: TLSPolicy) -> TLSPolicy {
        TLSPolicy(
            pins: pins.isEmpty ? base.pins : pins, caFile: caFile ?? base.caFile, minVersion: max(minVersion, base.minVersion),
            verifiesPeer: verifiesPeer && base.verifiesPeer, clientIdentity: clientIdentity ?? base.clientIdentity
        )
    }
}
