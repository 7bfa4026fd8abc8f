import CourierCore
import CourierKit

/// `plugin: client-token`: signs every request with an HMAC-SHA256 of its method, request target and a
/// timestamp, and sends the signature and the timestamp in two headers.
///
/// The pattern for any plugin: a descriptor that names the type and lists its settings (the policy compiler and
/// `courier lint` check policies against it, offline), and a factory that resolves the secrets once and returns
/// a live ``Authoriser``.
public enum ClientTokenPlugin: AuthoriserPlugin {
    public static let descriptor = AuthoriserTypeDescriptor(
        type: "client-token",
        summary: "Signs each request with an HMAC-SHA256 over its method, target and a timestamp.",
        settings: [
            .init("secret", .secret, required: true, "The shared key, e.g. \"${env:CLIENT_TOKEN_SECRET}\"."),
            .init("header", .headerName, default: "X-Client-Token", "The header that carries the signature."),
        ]
    )

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        guard case .string(let secret)? = instance.settings["secret"] else {
            throw AuthoriserError(.invalidSetting, "the 'secret' setting is required", authoriser: instance.name)
        }
        let header = instance.settings["header"]?.literalString ?? "X-Client-Token"
        // Resolved once, when the authoriser is made: a missing variable fails at start-up, not mid-request.
        let key = try context.secrets.resolve(secret)
        return ClientTokenAuthoriser(key: Array(key.utf8), header: header, clock: context.clock)
    }
}

/// The live authoriser. It holds no mutable state, so it is trivially `Sendable`.
final class ClientTokenAuthoriser: Authoriser {
    private let key: [UInt8]
    private let header: String
    private let clock: @Sendable () -> Double

    init(key: [UInt8], header: String, clock: @escaping @Sendable () -> Double) {
        self.key = key
        self.header = header
        self.clock = clock
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        let timestamp = String(Int(clock()))
        let message = "\(request.method)\n\(request.url.requestTarget)\n\(timestamp)"
        let mac = MessageDigest.authenticationCode(for: Array(message.utf8), key: key, algorithm: .sha256)
        request.headers.replaceOrAdd(name: header, value: MessageDigest.hex(mac))
        request.headers.replaceOrAdd(name: "X-Client-Timestamp", value: timestamp)
    }

    // A static key cannot be refreshed: a 401 means the key itself is wrong, which no retry fixes.
    func authorisationFailed(for request: AuthorisationRequest) async {}
    func refresh() async throws {}
}
