/// Why ``AES256GCM`` refused a key or a sealed record. Messages name the problem and sizes, never key or data.
package struct AES256GCMError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// The key is not exactly 32 bytes.
        case invalidKey = "invalid-key"
        /// The sealed bytes are shorter than a version byte, a nonce and a tag.
        case truncated
        /// The first byte names a format this build does not know.
        case unknownVersion = "unknown-version"
        /// The tag does not verify: the bytes were altered, or sealed with another key or other associated data.
        case authenticationFailed = "authentication-failed"
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { "aes-256-gcm: \(kind.rawValue): \(message)" }
}
