/// What one ``RecordStore/collectGarbage(verifyingPayloads:)`` run removed.
public struct GarbageCollectionReport: Hashable, Sendable {
    /// Unlocked records past their expiry.
    public var expired = 0
    /// Files that failed a check of the header or the file length.
    public var corrupt = 0
    /// Temporary files left by a writer that died before its rename.
    public var temporaryFiles = 0
    /// Unlocked records evicted, least recently used first, to fit the size cap.
    public var evicted = 0
    /// The bytes of every file removed.
    public var bytesFreed: Int64 = 0

    /// Nothing removed.
    public init() {}

    /// Adds another run's (or stripe's) counts to these.
    mutating func add(_ other: GarbageCollectionReport) {
        expired += other.expired
        corrupt += other.corrupt
        temporaryFiles += other.temporaryFiles
        evicted += other.evicted
        bytesFreed += other.bytesFreed
    }
}
