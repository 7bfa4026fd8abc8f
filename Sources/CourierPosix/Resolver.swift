internal import Glibc
internal import Synchronization
internal import CourierCore

/// Turns host names into addresses with `getaddrinfo`, on a small pool of dedicated threads so a slow DNS
/// server never stalls an event loop or Swift's cooperative threads.
///
/// - IP literals (`127.0.0.1`, `::1`, `[::1]`) are answered at once without a lookup.
/// - The pool starts threads on demand up to `maxThreads`; idle threads exit after 10 seconds.
/// - Cancelling the waiting task resumes it at once with `CancellationError`; the lookup itself cannot be
///   interrupted and finishes in the background, its answer discarded.
package final class Resolver: Sendable {
    typealias Lookup = @Sendable (String, Int) throws(ResolveError) -> [SocketAddress]

    /// A process-wide resolver with up to 4 threads.
    package static let shared = Resolver()

    private let pool: ResolverPool

    /// Creates a resolver with its own thread pool.
    package init(maxThreads: Int = 4) {
        precondition(maxThreads >= 1, "a Resolver needs at least one thread")
        pool = ResolverPool(maxThreads: maxThreads) { host, port throws(ResolveError) in
            try Syscall.getaddrinfo(host: host, port: port)
        }
    }

    /// Creates a resolver that runs `lookup` instead of `getaddrinfo` (tests use a lookup that blocks).
    init(maxThreads: Int, lookup: @escaping Lookup) {
        pool = ResolverPool(maxThreads: maxThreads, lookup: lookup)
    }

    /// The IPv4 and IPv6 TCP addresses of `host`, in the resolver's preference order.
    ///
    /// - Parameters:
    ///   - host: a host name or IP literal (IPv6 with or without brackets).
    ///   - port: 0...65535.
    /// - Throws: ``ResolveError`` (with the `EAI_*` code, message and host) or `CancellationError`.
    package func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw ResolveError(code: EAI_SERVICE, message: "port \(port) is out of range", host: host)
        }
        if let literal = SocketAddress(ipAddress: host, port: port) { return [literal] }
        if host.isEmpty { throw ResolveError.invalidHost(host, reason: "empty") }
        if host.utf8.contains(0) { throw ResolveError.invalidHost(host, reason: "contains a NUL byte") }
        if host.utf8.count > 253 { throw ResolveError.invalidHost(host, reason: "longer than 253 bytes") }
        if CancellationScope.isCancelled { throw CancellationError() }

        let job = ResolveJob(host: host, port: port)
        return try await CancellationScope.withCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<[SocketAddress], any Error>) in
                if job.attach(continuation) { pool.submit(job) }
            }
        } onCancel: {
            job.complete(.failure(CancellationError()))
        }
    }
}

/// One lookup; completed exactly once, by the worker or by cancellation, whichever comes first.
final class ResolveJob: Sendable {
    let host: String
    let port: Int

    private struct State {
        var continuation: UnsafeContinuation<[SocketAddress], any Error>?
        var result: Result<[SocketAddress], any Error>?
    }

    private let state = Mutex(State())

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    var isCompleted: Bool { state.withLock { $0.result != nil } }

    /// Stores the continuation; returns false (after resuming it) when the job already completed.
    func attach(_ continuation: UnsafeContinuation<[SocketAddress], any Error>) -> Bool {
        let early = state.withLock { state -> Result<[SocketAddress], any Error>? in
            if let result = state.result { return result }
            if CancellationScope.isCancelled {
                state.result = .failure(CancellationError())
                return state.result
            }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(with: early)
            return false
        }
        return true
    }

    func complete(_ result: Result<[SocketAddress], any Error>) {
        let continuation = state.withLock { state -> UnsafeContinuation<[SocketAddress], any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}

/// The worker threads behind a ``Resolver``: a FIFO of jobs, a counting semaphore, and threads started on
/// demand up to a limit.
final class ResolverPool: Sendable {
    private struct State {
        var queue: [ResolveJob] = []
        var threads = 0
        var idle = 0
    }

    private let maxThreads: Int
    private let lookup: Resolver.Lookup
    private let state = Mutex(State())
    nonisolated(unsafe) private let semaphore: UnsafeMutablePointer<sem_t>

    init(maxThreads: Int, lookup: @escaping Resolver.Lookup) {
        self.maxThreads = maxThreads
        self.lookup = lookup
        semaphore = .allocate(capacity: 1)
        Syscall.semaphoreInit(semaphore)
    }

    deinit {
        // Worker threads hold a strong reference, so none is running here.
        Syscall.semaphoreDestroy(semaphore)
        semaphore.deallocate()
    }

    func submit(_ job: ResolveJob) {
        let spawn = state.withLock { state -> Bool in
            state.queue.append(job)
            // Start a thread when the waiting jobs outnumber the idle threads (an idle thread that was
            // just signalled still counts as idle until it wakes, so compare counts, not "idle == 0").
            guard state.queue.count > state.idle, state.threads < maxThreads else { return false }
            state.threads += 1
            return true
        }
        if spawn {
            do {
                Syscall.detachThread(try Syscall.startThread(name: "courier-dns") { [self] in work() })
            } catch {
                state.withLock { $0.threads -= 1 }
                // No thread could be started: fail this job rather than leave it waiting forever when no
                // other worker exists.
                let orphaned = state.withLock { state -> Bool in
                    guard state.threads == 0, let index = state.queue.firstIndex(where: { $0 === job }) else { return false }
                    state.queue.remove(at: index)
                    return true
                }
                if orphaned {
                    job.complete(.failure(ResolveError(code: EAI_SYSTEM, errno: error.errno, message: "\(error)", host: job.host)))
                }
            }
        }
        Syscall.semaphorePost(semaphore)
    }

    private func work() {
        while true {
            state.withLock { $0.idle += 1 }
            let signalled = Syscall.semaphoreWait(semaphore, seconds: 10)
            let job = state.withLock { state -> ResolveJob?? in
                state.idle -= 1
                if state.queue.isEmpty {
                    if signalled { return .some(nil) }  // the job was taken by a thread that timed out
                    state.threads -= 1
                    return .none  // idle too long: exit
                }
                return .some(state.queue.removeFirst())
            }
            guard let job else { return }
            guard let job, !job.isCompleted else { continue }
            do throws(ResolveError) {
                let addresses = try lookup(job.host, job.port)
                if addresses.isEmpty { throw ResolveError.noAddresses(host: job.host) }
                job.complete(.success(addresses))
            } catch {
                job.complete(.failure(error))
            }
        }
    }
}
