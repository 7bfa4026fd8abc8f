public import CourierCore
internal import CourierCrypto

/// `plugin: hmac-signature`: signs every request with HMAC-SHA256 or HMAC-SHA512 (RFC 2104) under a shared key.
///
/// It first sets a `Date` header (IMF-fixdate from the context's clock), then signs this canonical string
/// (UTF-8, lines joined by `\n`, no trailing newline):
///
///     <METHOD>                                   e.g. POST
///     <request target>                           path and ?query as sent, e.g. /v1/items?page=2
///     <name>:<value>                             one line per `signed-headers` entry, in the configured order:
///     …                                          the name lower-cased, the values of repeated fields joined
///                                                with ", "; `host` is the Host header the request will carry
///     <hex SHA-256 of the body>                  lower-case; the empty body's digest when there is none
///
/// and sends `<header>: keyId="<key-id>",algorithm="hmac-sha256",headers="host date",signature="<base64 MAC>"`.
/// A signed header the request lacks is an `unsignable-request` error, not an empty line; so is a streamed
/// body (``AuthorisationRequest/hasStreamedBody``), whose digest is not known before it is sent.
public enum HMACSignaturePlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.hmacSignature

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let keyID = try settings.requiredHeaderValue("key-id")
        guard !keyID.isEmpty, !keyID.contains("\""), !keyID.contains("\\") else {
            throw settings.invalid("key-id", "must be non-empty and hold no '\"' or '\\'")
        }
        let secret = try settings.requiredString("secret")
        guard !secret.isEmpty else { throw settings.invalid("secret", "is empty") }
        let algorithm: HMAC.Algorithm
        switch try settings.string("algorithm") ?? "hmac-sha256" {
        case "hmac-sha256": algorithm = .sha256
        case "hmac-sha512": algorithm = .sha512
        default: throw settings.invalid("algorithm", "must be hmac-sha256 or hmac-sha512")
        }
        let signedHeaders = try (settings.stringList("signed-headers") ?? ["host", "date"]).map { $0.lowercased() }
        guard !signedHeaders.isEmpty else { throw settings.invalid("signed-headers", "is empty") }
        for name in signedHeaders where !HTTPHeaders.isValidName(name) {
            throw settings.invalid("signed-headers", "holds '\(name)', which is not a header name")
        }
        return HMACSigner(
            name: instance.name,
            keyID: keyID,
            key: Array(secret.utf8),
            algorithm: algorithm,
            header: try settings.headerName("header", default: "Signature"),
            signedHeaders: signedHeaders,
            clock: context.clock
        )
    }
}
