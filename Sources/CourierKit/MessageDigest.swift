internal import CourierCrypto

/// SHA-256 or SHA-512 (FIPS 180-4), incremental, and HMAC over either (RFC 2104), computed by the system's
/// libcrypto: for authoriser plugins that sign requests and for apps that check what they downloaded.
///
/// ```swift
/// var digest = MessageDigest(.sha256)
/// digest.update(chunk)                      // as often as chunks arrive
/// print(MessageDigest.hex(digest.finalize()))
///
/// let mac = MessageDigest.authenticationCode(for: Array(message.utf8), key: key, algorithm: .sha256)
/// ```
///
/// One type with a name of its own rather than `SHA256` and `HMAC`: those are swift-crypto's names, and an app
/// may import `Crypto` beside `CourierKit`.
public struct MessageDigest: Sendable {
    /// The hash function.
    public enum Algorithm: String, Hashable, Sendable, CaseIterable {
        case sha256
        case sha512
    }

    private enum State: Sendable {
        case sha256(SHA256)
        case sha512(SHA512)
    }

    /// The hash function this digest computes.
    public let algorithm: Algorithm
    private var state: State

    /// An empty message's digest, ready for ``update(_:)``.
    public init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .sha256: state = .sha256(SHA256())
        case .sha512: state = .sha512(SHA512())
        }
    }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        switch state {
        case .sha256(var hasher):
            hasher.update(bytes)
            state = .sha256(hasher)
        case .sha512(var hasher):
            hasher.update(bytes)
            state = .sha512(hasher)
        }
    }

    /// The digest of everything added so far (32 bytes for SHA-256, 64 for SHA-512); the value can go on being
    /// updated.
    public func finalize() -> [UInt8] {
        switch state {
        case .sha256(let hasher): hasher.finalize()
        case .sha512(let hasher): hasher.finalize()
        }
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>, algorithm: Algorithm) -> [UInt8] {
        switch algorithm {
        case .sha256: SHA256.hash(bytes)
        case .sha512: SHA512.hash(bytes)
        }
    }

    /// HMAC (RFC 2104) of `message` under `key`: `H((K ^ opad) || H((K ^ ipad) || message))`.
    public static func authenticationCode(
        for message: some Collection<UInt8>,
        key: some Collection<UInt8>,
        algorithm: Algorithm
    ) -> [UInt8] {
        HMAC.authenticationCode(for: message, key: key, algorithm: algorithm == .sha256 ? .sha256 : .sha512)
    }

    /// Lower-case hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        SHA256.hex(bytes)
    }
}
