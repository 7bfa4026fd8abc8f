/// What `courier cache ls` and `inspect` show of one record: its header, read without changing anything.
public struct RecordSummary: Sendable, Hashable {
    public var key: String
    /// The file's name: the SHA-256 of the key, in hex.
    public var fileName: String
    /// Bytes on disk (header, key and payload).
    public var fileSize: Int64
    public var payloadSize: UInt64
    public var lockCount: UInt32
    /// 0: expires ``RecordStoreOptions/defaultExpiry`` after the last access (sliding); else after the store.
    public var ttl: Duration
    /// Nanoseconds since the Unix epoch, on the store's clock.
    public var storeTime: Int64
    public var accessTime: Int64
    /// When it expires (it may still be returned after that while it is locked).
    public var expiryTime: Int64
    /// Whether it had expired when it was read.
    public var isExpired: Bool
}
