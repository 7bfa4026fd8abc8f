import Foundation
import Synchronization

/// A task executor with threads of its own, outside Swift's cooperative pool.
///
/// The record store runs an uncontended one-key operation's system calls on the calling task's thread. Creating
/// a file usually takes tens of microseconds, but on this machine's root file system (ext4 without a journal)
/// each creation walks past every inode deleted in the last minutes, and the suite deletes thousands: hundreds of
/// stores then hold the pool's two threads inside `open` for seconds, and every other suite's timers and socket
/// callbacks wait (a loader test measured 4.9 s for a cancellation it expects within 4). Suites that store in
/// bulk run on this executor instead (``Trait/onThreadsOfTheirOwn``), as docs/cache.md advises an app to, and so
/// do the suites that compute for seconds in a debug build (property and random-input tests): a `gdb` snapshot of
/// a stalled run found both pool threads in such tests while 30 connection tasks waited 5 s to start. Its
/// threads run at the lowest priority (``yieldToTimingSensitiveWork()``), so that this work takes the CPU the
/// timing-sensitive suites leave instead of an equal share of the 2 cores.
public final class ThreadExecutor: TaskExecutor, Sendable {
    /// The executor the bulk suites share: two threads, as many as CI has cores, at the lowest priority.
    public static let shared = ThreadExecutor(threads: 2, name: "courier-test-io", lowPriority: true)

    /// For calls that block rather than compute (spawning a child, which waits until it has executed its
    /// binary; removing a scratch folder): four threads at the normal priority, which the children they spawn
    /// inherit.
    public static let blocking = ThreadExecutor(threads: 4, name: "courier-test-blocking", lowPriority: false)

    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)
    /// Its threads' `pthread_self()`.
    private let members = Mutex<Set<UInt>>([])

    /// Starts `threads` threads named `name` (at nice 19 with `lowPriority`); they live as long as the process.
    public init(threads: Int, name: String, lowPriority: Bool) {
        for _ in 0..<threads {
            let thread = Thread { [self] in
                members.withLock { _ = $0.insert(UInt(pthread_self())) }
                if lowPriority { yieldToTimingSensitiveWork() }
                while true {
                    available.wait()
                    let job = jobs.withLock { $0.removeFirst() }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
            thread.name = name
            thread.start()
        }
    }

    /// Whether the caller runs on one of this executor's threads.
    public var isCurrent: Bool {
        let current = UInt(pthread_self())
        return members.withLock { $0.contains(current) }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }
}
