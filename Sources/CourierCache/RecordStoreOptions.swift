/// How a ``RecordStore`` behaves.
public struct RecordStoreOptions: Sendable {
    /// The store's directory, created if missing. One directory may be shared by several stores and processes.
    public var directory: String
    /// The sliding expiry of TTL-0 records. SPTPersistentCache's default: 10 minutes.
    public var defaultExpiry: Duration = .seconds(600)
    /// The most bytes the record files may take (nil: no cap, no size eviction).
    public var sizeCap: Int64?
    /// The share of the file system eviction keeps free, as SPTPersistentCache does (10 %).
    public var minimumFreeFraction = 0.1
    /// The largest record file a load reads (header, key and payload).
    public var maximumRecordBytes = 1 << 30
    /// When to `fsync`.
    public var fsync: FsyncPolicy = .durable
    /// Where time comes from.
    public var clock: CacheClock = .system
    /// Test seam: called before each store's temporary-file write.
    var writeFault: (@Sendable (_ key: String) -> WriteFault?)?

    /// Options for a store in `directory`, with the defaults above.
    public init(directory: String) {
        self.directory = directory
    }
}
