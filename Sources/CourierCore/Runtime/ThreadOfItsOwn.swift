package import CCourierPosix

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// Threads started for work that blocks or computes for long (parsing a trust store takes 0.1–0.4 s of CPU with
/// OpenSSL 3.0; a record store's wait for a file lock held by another process, its `fsync`s, a collection's
/// removals), so that it never holds one of Swift concurrency's few cooperative threads, on which every other task
/// of the process depends. Plain detached pthreads: not Foundation's `Thread` (the vocabulary layer links no
/// Foundation), and not Dispatch's global queues, which on Linux share their threads with the cooperative pool.
package enum ThreadOfItsOwn {
    /// Runs `work` on a new detached thread named `name` and returns what it returns or throws. When no thread
    /// can be started, `work` runs on the caller's thread instead (it still runs, only less politely).
    package static func run<T: Sendable, Failure: Error>(
        name: String, _ work: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withUnsafeContinuation { continuation in
            let body: @Sendable () -> Void = {
                continuation.resume(returning: Result { () throws(Failure) -> T in try work() })
            }
            do {
                try start(name: name, body)
            } catch {
                body()
            }
        }
        return try result.get()
    }

    /// Starts a detached thread named `name` (the kernel keeps 15 bytes of it) running `body`.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        let thread = try startJoinable(name: name, body)
        let code = pthread_detach(thread)
        precondition(code == 0, "pthread_detach failed with \(code)")
    }

    /// Starts a thread named `name` running `body`; the caller must join or detach it.
    package static func startJoinable(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> pthread_t {
        let box = Unmanaged.passRetained(Work(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { argument in
            let work = Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue()
            CCourierPosix_setThreadName(work.name)
            work.body()
            return nil
        }, box)
        guard code == 0 else {
            Unmanaged<Work>.fromOpaque(box).release()
            throw SystemCallError(call: "pthread_create", errno: code)
        }
        return thread
    }

    /// Waits for a thread started by ``startJoinable(name:_:)`` to finish.
    package static func join(_ thread: pthread_t) {
        let code = pthread_join(thread, nil)
        precondition(code == 0, "pthread_join failed with \(code)")
    }

    /// What a new thread runs, handed to it through `pthread_create`'s argument.
    private final class Work {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
