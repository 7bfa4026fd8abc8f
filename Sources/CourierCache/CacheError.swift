import CourierCore

/// A record-store operation failed. Missing, expired and corrupt records are not errors (a load returns nil);
/// these are failures of the file system or of the caller.
public struct CacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation that failed.
    public enum Operation: String, Hashable, Sendable {
        case open, store, load, touch, lock, unlock, remove, size, collectGarbage = "collect-garbage", wipe, inspect
    }

    /// What went wrong.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// A system call failed.
        case system(SystemCallError)
        /// Unlock of a record whose lock count is already 0.
        case notLocked
        /// Lock of a record whose lock count is already `UInt32.max`.
        case lockCountOverflow
        /// The key is empty or longer than 64 KiB of UTF-8.
        case invalidKey
        /// A negative TTL.
        case invalidTTL
        /// The payload is larger than ``RecordStoreOptions/maximumRecordBytes`` allows.
        case recordTooLarge(limit: Int)

        public var description: String {
            switch self {
            case .system(let error): return error.description
            case .notLocked: return "unlock of a record that is not locked"
            case .lockCountOverflow: return "lock count overflow"
            case .invalidKey: return "the key is empty or longer than 64 KiB"
            case .invalidTTL: return "negative TTL"
            case .recordTooLarge(let limit): return "record larger than \(limit) bytes"
            }
        }
    }

    /// The key concerned, or nil for a whole-store operation.
    public var key: String?
    public var operation: Operation
    public var reason: Reason

    public init(key: String?, operation: Operation, reason: Reason) {
        self.key = key
        self.operation = operation
        self.reason = reason
    }

    public var description: String {
        let subject = key.map { " of \"\($0.count > 80 ? String($0.prefix(80)) + "…" : $0)\"" } ?? ""
        return "cache \(operation.rawValue)\(subject) failed: \(reason)"
    }
}
