/// An unlocked, valid record that size eviction may remove.
struct EvictionCandidate: Hashable, Sendable {
    /// The record's file name (the hex SHA-256 of its key), which also orders ties.
    var name: String
    /// The file's length in bytes.
    var size: Int64
    /// The header's access time, nanoseconds since the Unix epoch: the LRU order.
    var accessTime: Int64
}
