internal import CCourierOpenSSL

/// SHA-256 (FIPS 180-4), incremental, computed by libcrypto. Used for body digests in reports, SPKI pins and
/// request signing.
package struct SHA256: Sendable {
    private var digest = EVPDigest(EVP_sha256())

    package init() {}

    /// Adds bytes to the message.
    package mutating func update(_ bytes: some Collection<UInt8>) {
        digest.update(bytes)
    }

    /// The 32-byte digest of everything added.
    package func finalize() -> [UInt8] {
        digest.finalize()
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Lower-case hex of `bytes`.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
