/// What a refresh hands a ``SharedTokenStore`` to write: the record's bytes (a secret) and how long the store
/// keeps them.
public struct SharedTokenRecord: Hashable, Sendable, CustomStringConvertible {
    /// The record, in the plugin's own encoding. Never printed.
    public var bytes: [UInt8]
    /// How long the store keeps the record. A record that carries a refresh token should outlive its access
    /// token: the next refresh needs it.
    public var keepFor: Duration

    public init(bytes: [UInt8], keepFor: Duration) {
        self.bytes = bytes
        self.keepFor = keepFor
    }

    public var description: String { "SharedTokenRecord(\(bytes.count) bytes, kept for \(keepFor))" }
}
