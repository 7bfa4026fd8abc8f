internal import CCourierOpenSSL

/// SHA-512 (FIPS 180-4), incremental, computed by libcrypto. Used by HMAC-SHA-512 request signing.
package struct SHA512: Sendable {
    /// The block size in bytes.
    package static let blockSize = 128

    private var digest = EVPDigest(EVP_sha512())

    package init() {}

    /// Adds bytes to the message.
    package mutating func update(_ bytes: some Collection<UInt8>) {
        digest.update(bytes)
    }

    /// The 64-byte digest of everything added.
    package func finalize() -> [UInt8] {
        digest.finalize()
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA512()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
