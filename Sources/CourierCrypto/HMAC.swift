internal import CCourierOpenSSL

/// HMAC (RFC 2104) over SHA-256 or SHA-512, for request signing.
package enum HMAC {
    /// The hash function under the MAC.
    package enum Algorithm: String, Hashable, Sendable, CaseIterable {
        case sha256
        case sha512

        /// The hash's block size in bytes (B in RFC 2104).
        package var blockSize: Int { self == .sha256 ? 64 : 128 }

        /// The digest of `bytes`.
        package func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
            switch self {
            case .sha256: return SHA256.hash(bytes)
            case .sha512: return SHA512.hash(bytes)
            }
        }
    }

    /// `H((K ^ opad) || H((K ^ ipad) || message))` (RFC 2104), computed by libcrypto (`EVP_Q_mac`).
    package static func authenticationCode(
        for message: some Collection<UInt8>,
        key: some Collection<UInt8>,
        algorithm: Algorithm
    ) -> [UInt8] {
        let key = Array(key)
        let message = Array(message)
        var out = [UInt8](repeating: 0, count: 64)
        var length = 0
        let ok = key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                EVP_Q_mac(
                    nil, "HMAC", nil, algorithm == .sha256 ? "SHA256" : "SHA512", nil,
                    k.baseAddress ?? UnsafeRawPointer(bitPattern: 1), k.count, m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    m.count, &out, out.count, &length
                )
            }
        }
        precondition(ok != nil, "EVP_Q_mac failed")
        return Array(out[0..<length])
    }
}
