internal import CourierCore
internal import CourierCrypto

/// The live `hmac-signature` authoriser; see ``HMACSignaturePlugin`` for the canonical string.
final class HMACSigner: Authoriser {
    private let name: String
    private let keyID: String
    private let key: [UInt8]
    private let algorithm: HMAC.Algorithm
    private let header: String
    private let signedHeaders: [String]
    private let clock: @Sendable () -> Double

    init(
        name: String, keyID: String, key: [UInt8], algorithm: HMAC.Algorithm, header: String, signedHeaders: [String],
        clock: @escaping @Sendable () -> Double
    ) {
        self.name = name
        self.keyID = keyID
        self.key = key
        self.algorithm = algorithm
        self.header = header
        self.signedHeaders = signedHeaders
        self.clock = clock
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        request.headers.replaceOrAdd(name: "Date", value: HTTPDate.format(clock()))
        let canonical = try canonicalString(request)
        let mac = HMAC.authenticationCode(for: Array(canonical.utf8), key: key, algorithm: algorithm)
        let value = "keyId=\"\(keyID)\",algorithm=\"hmac-\(algorithm.rawValue)\",headers=\"\(signedHeaders.joined(separator: " "))\","
            + "signature=\"\(Base64.encode(mac))\""
        request.headers.replaceOrAdd(name: header, value: value)
    }

    /// The string that is signed (see ``HMACSignaturePlugin``).
    func canonicalString(_ request: AuthorisationRequest) throws(AuthoriserError) -> String {
        var lines = [request.method.rawValue, request.url.requestTarget]
        for name in signedHeaders {
            var values = request.headers.values(for: name)
            if values.isEmpty && name == "host" { values = [request.url.hostHeader] }
            guard !values.isEmpty else {
                throw AuthoriserError(
                    .unsignableRequest, "the request has no '\(name)' header, which 'signed-headers' lists", authoriser: self.name
                )
            }
            lines.append("\(name):\(values.joined(separator: ", "))")
        }
        guard !request.hasStreamedBody else {
            throw AuthoriserError(
                .unsignableRequest, "the body is streamed, so its digest is not known before sending; send it as bytes",
                authoriser: self.name
            )
        }
        lines.append(SHA256.hex(SHA256.hash(request.body ?? [])))
        return lines.joined(separator: "\n")
    }

    func authorisationFailed(for request: AuthorisationRequest) async {}

    func refresh() async throws {}
}
