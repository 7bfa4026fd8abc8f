package import CourierCore

/// A record-store operation failed. Missing, expired and corrupt records are not errors (a load returns nil);
/// these are failures of the file system or of the caller.
public struct CacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation that failed.
    public enum Operation: String, Hashable, Sendable {
        /// Opening the store (creating its directory).
        case open
        /// ``RecordStore/store(_:forKey:ttl:locked:)``.
        case store
        /// Loading a record.
        case load
        /// ``RecordStore/touch(_:)``.
        case touch
        /// ``RecordStore/lock(_:)``.
        case lock
        /// ``RecordStore/unlock(_:)``.
        case unlock
        /// ``RecordStore/remove(_:)``.
        case remove
        /// Summing record sizes (``RecordStore/totalSize()``, ``RecordStore/lockedSize()``).
        case size
        /// ``RecordStore/collectGarbage(verifyingPayloads:)`` (`collect-garbage` in messages).
        case collectGarbage = "collect-garbage"
        /// ``RecordStore/wipeLocked()`` or ``RecordStore/wipeUnlocked()``.
        case wipe
        /// ``RecordStore/inspect(_:)`` or ``RecordStore/inspectAll(verifyingPayloads:)``.
        case inspect
    }

    /// What went wrong.
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// A system call failed: which one, and its `errno` (`ENOSPC` for a full disk, `EACCES`, `EIO`, ...).
        case system(call: String, errno: Int32)
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
        /// The caller stopped waiting: it runs under a `CancellationScope` (a data loader's load) that was
        /// cancelled while the operation waited on a thread of its own for a lock or an `fsync`. The operation
        /// itself still runs to its end there, as it would have; only its result is not delivered.
        case cancelled

        /// The reason for a failed system call, as the one wrapper of system calls throws it.
        package static func system(_ error: SystemCallError) -> Reason { .system(call: error.call, errno: error.errno) }

        /// The reason, in a few words.
        public var description: String {
            switch self {
            case .system(let call, let errno): return SystemCallError(call: call, errno: errno).description
            case .notLocked: return "unlock of a record that is not locked"
            case .lockCountOverflow: return "lock count overflow"
            case .invalidKey: return "the key is empty or longer than 64 KiB"
            case .invalidTTL: return "negative TTL"
            case .recordTooLarge(let limit): return "record larger than \(limit) bytes"
            case .cancelled: return "the caller was cancelled while the operation waited (it still runs to its end)"
            }
        }
    }

    /// The key concerned, or nil for a whole-store operation.
    public var key: String?
    /// The operation that failed.
    public var operation: Operation
    /// Why it failed.
    public var reason: Reason

    /// An error of `operation` on `key` (nil for a whole-store operation) because of `reason`.
    public init(key: String?, operation: Operation, reason: Reason) {
        self.key = key
        self.operation = operation
        self.reason = reason
    }

    /// `cache OPERATION of "KEY" failed: REASON` (a long key shortened).
    public var description: String {
        let subject = key.map { " of \"\($0.count > 80 ? String($0.prefix(80)) + "…" : $0)\"" } ?? ""
        return "cache \(operation.rawValue)\(subject) failed: \(reason)"
    }
}
