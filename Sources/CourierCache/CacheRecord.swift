/// A record as a load returns it.
public struct CacheRecord: Hashable, Sendable {
    /// The key it was stored under.
    public var key: String
    /// The payload.
    public var data: [UInt8]
    /// 0: sliding expiry from the last access; otherwise absolute expiry from the store time.
    public var ttl: Duration
    /// The persistent lock count (0 = unlocked).
    public var lockCount: UInt32
    /// When the record was stored, nanoseconds since the Unix epoch.
    public var storeTime: Int64
    /// The access time before this load moved it, nanoseconds since the Unix epoch.
    public var accessTime: Int64

    /// A record with the given fields (the store makes them; for tests and tools).
    public init(key: String, data: [UInt8], ttl: Duration, lockCount: UInt32, storeTime: Int64, accessTime: Int64) {
        self.key = key
        self.data = data
        self.ttl = ttl
        self.lockCount = lockCount
        self.storeTime = storeTime
        self.accessTime = accessTime
    }
}
