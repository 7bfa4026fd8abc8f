/// When the store calls `fsync(2)`. Crash safety against `kill -9` never depends on it (a rename is atomic in
/// the page cache); it decides what survives a power loss or kernel crash.
public enum FsyncPolicy: Hashable, Sendable {
    /// A store syncs the temporary file before the rename and the directory after it; a lock or unlock syncs
    /// the header it rewrote. Access-time updates are never synced: losing one costs an LRU position.
    case durable
    /// Never sync. After a power loss a record may be missing, or fail its checksum and be removed, but a torn
    /// record is still never returned.
    case none
}
