import CourierCore

/// Runs work that holds a thread for long (parsing a trust store takes 0.1–0.4 s of CPU with OpenSSL 3.0) on a
/// thread started for it, so that it never holds one of Swift concurrency's few cooperative threads, on which
/// every other task of the process depends.
public enum ThreadOfItsOwn {
    /// Runs `work` on a new detached thread named `name` and returns what it returns or throws. When no thread
    /// can be started, `work` runs on the caller's thread instead (it still runs, only less politely).
    public static func run<T: Sendable, Failure: Error>(
        name: String, _ work: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withUnsafeContinuation { continuation in
            do {
                Syscall.detachThread(try Syscall.startThread(name: name) {
                    continuation.resume(returning: Result { () throws(Failure) -> T in try work() })
                })
            } catch {
                continuation.resume(returning: Result { () throws(Failure) -> T in try work() })
            }
        }
        return try result.get()
    }
}
