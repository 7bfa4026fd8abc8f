/// The decision of an ``EventLoopThreadScheduling/adaptive`` loop: which policy its thread should run under, from
/// how many reads and writes are under way on it (from their start until they return, parked or waiting for the
/// caller's executor to run them). A pure state machine: the loop feeds it the count at the top of every
/// iteration and applies the change it returns; no clock, no system call.
///
/// Many operations under way mean many requests in flight: the threads that run their callers are busy, and a
/// loop that preempts them for every packet costs two context switches per response, so the loop takes
/// `SCHED_BATCH` (no wake-up preemption) and finds many events at once. Few mean latency matters more than
/// throughput, and the loop goes back to the ordinary policy, where readiness wakes it at once even when its
/// core is busy. Two thresholds (hysteresis) keep a count that hovers near one of them from switching on every
/// iteration. (Parked tasks alone are the wrong count: when the callers' core is the bottleneck most requests
/// have their response already and wait for that core, not for the network.)
struct AdaptiveScheduling: Sendable, Equatable {
    /// A policy change for the loop thread to make.
    enum Change: Sendable, Equatable {
        case toBatch
        case toNormal
    }

    private enum State: Sendable, Equatable {
        case normal
        case batch
    }

    /// From this many operations under way on, the loop runs under `SCHED_BATCH`.
    static let batchFrom = 16
    /// At this many or fewer it goes back to the ordinary policy.
    static let normalAtOrBelow = 4

    private var state = State.normal

    /// Whether the loop should be running under `SCHED_BATCH` now.
    var isBatch: Bool { state == .batch }

    /// The change to make, if any, for `operations` under way on the loop.
    mutating func observe(operations: Int) -> Change? {
        switch state {
        case .normal where operations >= Self.batchFrom:
            state = .batch
            return .toBatch
        case .batch where operations <= Self.normalAtOrBelow:
            state = .normal
            return .toNormal
        case .normal, .batch:
            return nil
        }
    }
}
