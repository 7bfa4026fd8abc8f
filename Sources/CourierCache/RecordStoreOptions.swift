public import CourierCore

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
    /// The threads a garbage collection works on, each on different stripes. A collection mostly waits for the
    /// file system (an `unlink` of a file with data blocks waits for the disk, for its discard where the file
    /// system is mounted with `discard`), so more threads than cores overlap the waits; 1 works through the
    /// stripes one after another. The default, 16, is where the bench's collection over 100,000 records stopped
    /// getting faster on a 2-core machine (Benchmarks/README.md).
    public var collectionThreads = 16
    /// Where time comes from.
    public var clock: WallClock = .system
    /// Test seam: called before each store's temporary-file write.
    var writeFault: (@Sendable (_ key: String) -> WriteFault?)?

    /// Options for a store in `directory`, with the defaults above.
    public init(directory: String) {
        self.directory = directory
    }
}
