import CCourierOpenSSL

/// SHA-1 (FIPS 180-4), computed by libcrypto. Not for security: Redis names a Lua script by the SHA-1 of its
/// source (`EVALSHA`), and this is how Courier computes that name.
package struct SHA1: Sendable {
    private var digest = EVPDigest(EVP_sha1())

    package init() {}

    /// Adds bytes to the message.
    package mutating func update(_ bytes: some Collection<UInt8>) {
        digest.update(bytes)
    }

    /// The 20-byte digest of everything added.
    package func finalize() -> [UInt8] {
        digest.finalize()
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA1()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes` in lower-case hex (40 characters), as Redis writes a script's SHA-1.
    package static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        SHA256.hex(hash(bytes))
    }
}
