/// What `courier cache ls` and `inspect` show of one record: its header, read without changing anything.
public struct RecordSummary: Sendable, Hashable {
    /// The record's key.
    public var key: String
    /// The file's name: the SHA-256 of the key, in hex.
    public var fileName: String
    /// Bytes on disk (header, key and payload).
    public var fileSize: Int64
    /// Bytes of payload.
    public var payloadSize: UInt64
    /// How many times the record is locked (a locked record is never evicted, even when expired).
    public var lockCount: UInt32
    /// 0: expires ``RecordStoreOptions/defaultExpiry`` after the last access (sliding); else after the store.
    public var ttl: Duration
    /// Nanoseconds since the Unix epoch, on the store's clock.
    public var storeTime: Int64
    /// When it was last loaded or touched, in nanoseconds since the Unix epoch on the store's clock.
    public var accessTime: Int64
    /// When it expires (it may still be returned after that while it is locked).
    public var expiryTime: Int64
    /// Whether it had expired when it was read.
    public var isExpired: Bool
}
