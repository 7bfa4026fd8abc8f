/// When the store calls `fsync(2)`. Crash safety against `kill -9` never depends on it (a rename is atomic in
/// the page cache); it decides what survives a power loss or kernel crash.
public enum FsyncPolicy: Hashable, Sendable {
    /// A store is on disk when the call returns. A replacement syncs the temporary file before renaming it over
    /// the old record, then the directory, so a failed sync leaves the old record; a new key's store renames
    /// first (`RENAME_NOREPLACE`: there is nothing to lose) and then syncs the file and the directory, one journal
    /// commit instead of two, taking the file back if a sync fails. A lock or unlock syncs the header it
    /// rewrote. Access-time updates are never synced: losing one costs an LRU position.
    case durable
    /// Never sync. After a power loss a record may be missing, or fail its checksum and be removed, but a torn
    /// record is still never returned.
    case none
}
