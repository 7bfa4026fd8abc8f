internal import CourierCore

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// Whether the code running may wait for a stripe's file lock (`flock`), which blocks its thread.
///
/// On Swift's cooperative pool (a thread or two per core) a blocked thread is work nobody else can do, and a
/// lock can be held for long by another process (a collection over many records). So an operation on one key
/// first tries its lock without waiting, and only when it is taken retries on a thread of its own
/// (``withoutBlockingThePool(_:key:syncing:_:)``); scans, which hold locks longest, always run there.
enum LockWaiting {
    /// True where waiting is allowed (the default: synchronous callers such as a forked test child); false on the
    /// first, non-blocking try of an async operation.
    @TaskLocal static var allowed = true

    /// The error a lock taken by someone else gives when waiting is not allowed.
    static func isContention(_ error: CacheError) -> Bool {
        if case .system(let call, let errno) = error.reason { return call == "flock" && errno == EWOULDBLOCK }
        return false
    }

    /// Runs `body` on a thread of its own, where it may wait for locks. Not on Dispatch's global queues: on Linux
    /// they share their threads with Swift's cooperative pool, so work that blocks there starves it just the same
    /// (a test that held a stripe's lock deadlocked that way). Contention is rare, so a thread per wait is cheap;
    /// a `.durable` store, lock or unlock comes here every time, and its fsyncs cost far more than the thread.
    ///
    /// Under a `CancellationScope` (a data loader's load, which runs on its caller's task) the caller stops
    /// waiting when the scope or its task is cancelled, with a ``CacheError/Reason/cancelled`` error; `body` still
    /// runs to its end on its thread. Elsewhere the wait is not cancellable, as a synchronous call would not be.
    static func onThreadThatMayWait<T: Sendable>(
        _ operation: CacheError.Operation, key: String?, _ body: @escaping @Sendable () throws(CacheError) -> T
    ) async throws(CacheError) -> T {
        guard CancellationScope.current != nil else {
            let result: Result<T, CacheError> = await withCheckedContinuation { continuation in
                start { continuation.resume(returning: run(body)) }
            }
            return try result.get()
        }
        let shot = OneShot<Result<T, CacheError>>()
        let result = await CancellationScope.withCancellationHandler {
            // Cancelled already (the handler has run): the operation is not started.
            if !CancellationScope.isCancelled { start { shot.resume(run(body)) } }
            return await shot.wait()
        } onCancel: {
            shot.resume(.failure(CacheError(key: key, operation: operation, reason: .cancelled)))
        }
        return try result.get()
    }

    /// Runs a one-key operation here when its stripe's lock is free at once, the common case, with no thread hop;
    /// when another task or process holds it, again on a thread that may wait. A one-key operation takes its lock
    /// before it changes anything, so the retry starts clean.
    ///
    /// An operation `syncing` (a store, lock or unlock under ``FsyncPolicy/durable``) goes to a thread of its own
    /// at once: its `fsync`s block for milliseconds, which would hold one of the pool's few threads, and on
    /// threads of their own the syncs of concurrent operations overlap instead of queueing behind the pool's
    /// threads (8 tasks storing 4 KiB `.durable` records: 600 ops/s on the pool, 2,600 on threads of their own).
    static func withoutBlockingThePool<T: Sendable>(
        _ operation: CacheError.Operation, key: String?, syncing: Bool = false,
        _ body: @escaping @Sendable () throws(CacheError) -> T
    ) async throws(CacheError) -> T {
        if syncing { return try await onThreadThatMayWait(operation, key: key, body) }
        let first: Result<T, CacheError> = $allowed.withValue(false) {
            Result { () throws(CacheError) -> T in try body() }
        }
        if case .failure(let error) = first, isContention(error) {
            return try await onThreadThatMayWait(operation, key: key, body)
        }
        return try first.get()
    }

    private static func run<T>(_ body: () throws(CacheError) -> T) -> Result<T, CacheError> {
        LockWaiting.$allowed.withValue(true) { Result { () throws(CacheError) -> T in try body() } }
    }

    /// Starts `work` on a thread of its own; where none can be started, runs it here (it may wait: the caller
    /// is suspended on it, which blocks one of the pool's threads, but the operation still completes).
    private static func start(_ work: @escaping @Sendable () -> Void) {
        do {
            try ThreadOfItsOwn.start(name: "courier-cache-wait", work)
        } catch {
            work()
        }
    }
}
