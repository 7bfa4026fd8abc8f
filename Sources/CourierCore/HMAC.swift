/// HMAC (RFC 2104) over SHA-256 or SHA-512, for request signing.
public enum HMAC {
    /// The hash function under the MAC.
    public enum Algorithm: String, Hashable, Sendable, CaseIterable {
        case sha256
        case sha512

        /// The hash's block size in bytes (B in RFC 2104).
        public var blockSize: Int { self == .sha256 ? 64 : 128 }

        /// The digest of `bytes`.
        public func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
            switch self {
            case .sha256: return SHA256.hash(bytes)
            case .sha512: return SHA512.hash(bytes)
            }
        }
    }

    /// `H((K ^ opad) || H((K ^ ipad) || message))`, where a key longer than the block is hashed first and a
    /// shorter one is padded with zeros.
    public static func authenticationCode(
        for message: some Collection<UInt8>,
        key: some Collection<UInt8>,
        algorithm: Algorithm
    ) -> [UInt8] {
        var k = Array(key)
        if k.count > algorithm.blockSize { k = algorithm.hash(k) }
        k += [UInt8](repeating: 0, count: algorithm.blockSize - k.count)
        let inner = k.map { $0 ^ 0x36 } + Array(message)
        let outer = k.map { $0 ^ 0x5c } + algorithm.hash(inner)
        return algorithm.hash(outer)
    }
}
