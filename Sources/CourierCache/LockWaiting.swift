import CourierCore
import Foundation
import Glibc

/// Whether the code running may wait for a stripe's file lock (`flock`), which blocks its thread.
///
/// On Swift's cooperative pool (a thread or two per core) a blocked thread is work nobody else can do, and a
/// lock can be held for long by another process (a collection over many records). So an operation on one key
/// first tries its lock without waiting, and only when it is taken retries on a thread of its own
/// (``RecordStore``'s `withoutBlockingThePool`); scans, which hold locks longest, always run there.
enum LockWaiting {
    /// True where waiting is allowed (the default: synchronous callers such as a forked test child); false on the
    /// first, non-blocking try of an async operation.
    @TaskLocal static var allowed = true

    /// The error a lock taken by someone else gives when waiting is not allowed.
    static func isContention(_ error: CacheError) -> Bool {
        if case .system(let failure) = error.reason { return failure.call == "flock" && failure.errno == EWOULDBLOCK }
        return false
    }

    /// Runs `body` on a thread of its own, where it may wait for locks. Not on Dispatch's global queues: on Linux
    /// they share their threads with Swift's cooperative pool, so work that blocks there starves it just the same
    /// (a test that held a stripe's lock deadlocked that way). Contention is rare, so a thread per wait is cheap;
    /// a `.durable` store, lock or unlock comes here every time, and its fsyncs cost far more than the thread.
    static func onThreadThatMayWait<T: Sendable>(
        _ body: @escaping @Sendable () throws(CacheError) -> T
    ) async throws(CacheError) -> T {
        let result: Result<T, CacheError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: LockWaiting.$allowed.withValue(true) {
                    Result { () throws(CacheError) -> T in try body() }
                })
            }
            thread.name = "courier-cache-wait"
            thread.start()
        }
        return try result.get()
    }
}
