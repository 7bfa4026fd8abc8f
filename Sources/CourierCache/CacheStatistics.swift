/// Counters over a store's lifetime (this process only).
public struct CacheStatistics: Hashable, Sendable {
    /// Corrupt files found (by a load, lock, touch, wipe or garbage collection) and removed.
    public var corruptRecordsRemoved = 0
    /// Loads that returned a record but could not move its access time (the record is still returned, as in
    /// SPTPersistentCache; only its LRU position and sliding expiry are stale).
    public var accessTimeWriteFailures = 0
    /// Background garbage-collection runs that failed; the last error is in ``lastBackgroundError``.
    public var backgroundFailures = 0
    /// The last background garbage-collection error.
    public var lastBackgroundError: CacheError?
    /// Stores that took the directory over its size cap and whose collection down to it then failed (the record
    /// itself was stored); the last error is in ``lastTrimError``.
    public var trimFailures = 0
    /// The last failed trim's error.
    public var lastTrimError: CacheError?

    /// All counts zero.
    public init() {}
}
