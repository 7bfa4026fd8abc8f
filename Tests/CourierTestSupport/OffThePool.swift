import Foundation

/// Runs CPU-heavy synchronous work (compiling 10,000 services, 20,000 fuzz inputs) on a thread of its own and
/// returns its result.
///
/// Swift concurrency's cooperative pool has one thread per core, two on CI. A test that computes for seconds
/// on it holds one of them, and two such tests stall every other suite's timers and socket callbacks: a
/// loader test expecting a 1 s Retry-After then sees 8 s. Heavy work runs here; `#expect` stays in the test,
/// on the result, where Swift Testing can attribute it.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            yieldToTimingSensitiveWork()
            continuation.resume(returning: work())
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// The CPU time the calling thread spends in `work`: unlike wall time, not inflated by other processes on a
/// loaded machine, so a bound on it catches accidentally quadratic work without failing on a busy CI runner.
public func threadCPUTime(_ work: () -> Void) -> Duration {
    measuringThreadCPUTime(work).cpu
}

/// `work`'s result and the CPU time the calling thread spent in it (see ``threadCPUTime(_:)``).
public func measuringThreadCPUTime<T>(_ work: () throws -> T) rethrows -> (result: T, cpu: Duration) {
    func now() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
    let start = now()
    let result = try work()
    return (result, now() - start)
}

/// Makes the calling thread the last to get a core (nice 19: on Linux `setpriority` with 0 names the calling
/// thread): bulk suites then use what the latency-sensitive ones leave, instead of sharing the 2 cores with them
/// evenly and stretching their timers and socket callbacks.
public func yieldToTimingSensitiveWork() {
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
}
