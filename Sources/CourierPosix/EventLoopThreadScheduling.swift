/// How the kernel schedules an ``EventLoopGroup``'s threads against the other threads on their core.
package enum EventLoopThreadScheduling: Sendable, Hashable {
    /// The ordinary policy (`SCHED_OTHER`): a loop thread that wakes for new readiness may preempt the thread
    /// running on its core at once. The lowest latency when that core is busy with other work.
    case normal
    /// `SCHED_BATCH`: a waking loop thread does not preempt the thread running on its core; it runs when that
    /// thread blocks or its time slice ends, and then finds many events at once.
    ///
    /// For throughput with many requests in flight where the loop shares a core with the threads that run the
    /// callers (a process on one core): preempting them for every packet costs two context switches per
    /// response. Measured at 64 requests in flight, client on one core: 69k → 98k requests per second (48k → 66k
    /// on a loaded machine). The price, measured too: when other work keeps that core busy, readiness waits for
    /// the rest of its time slice; one request at a time fell from 14.8k to 6.0k requests per second with a
    /// 4 ms p99 while a compiler shared the core (Benchmarks/README.md). A loop with a core of its own is not
    /// affected either way.
    case batch
    /// ``batch`` while many reads and writes are under way on the loop (16 or more: many requests in flight,
    /// throughput matters), ``normal`` again when few are (4 or fewer: latency matters). The default of
    /// `EventLoopGroup` and of the `HTTPClient`'s own loops.
    ///
    /// Measured, client on one core: at 64 requests in flight it reaches what ``batch`` does, and one request at a
    /// time stays where ``normal`` is, also while a compiler shares the core (Benchmarks/README.md). The loop
    /// changes its thread's policy only when the count crosses a threshold, one `sched_setscheduler` call each
    /// time; a kernel or sandbox that refuses it leaves the thread as it was.
    case adaptive
}
