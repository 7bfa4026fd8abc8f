internal import CCourierOpenSSL

/// SHA-1 (FIPS 180-4), computed by libcrypto. Not for security: Redis names a Lua script by the SHA-1 of its
/// source (`EVALSHA`), and this is how Courier computes that name. Whole messages only (scripts are short).
package enum SHA1 {
    /// The 20-byte digest of `bytes`.
    package static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = EVPDigest(EVP_sha1())
        digest.update(bytes)
        return digest.finalize()
    }

    /// The digest of `bytes` in lower-case hex (40 characters), as Redis writes a script's SHA-1.
    package static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        SHA256.hex(hash(bytes))
    }
}
