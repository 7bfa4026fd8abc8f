internal import Synchronization

/// A clock that moves only when a test moves it: handed to a data-loader service as `LoaderClock.manual(_:)`,
/// it is what the loader's rate limits, back-offs, Retry-After pauses, fleet waits, deadlines, authoriser timeouts,
/// token expiry, fallback cool-downs and cache freshness read and sleep on, so a test advances time instead of
/// waiting for it: a policy with a 30 s back-off is tested in milliseconds.
///
/// ```swift
/// let clock = ManualClock()
/// configuration.clock = .manual(clock)
/// async let response = loader.load(request)   // 503, then a 30 s back-off
/// try await clock.waitForSleepers(1)          // the load sleeps on the clock
/// clock.advance(by: .seconds(30))             // no real time passes
/// #expect(try await response.status == 200)
/// ```
///
/// It keeps one time and derives both readings from it: the monotonic one (``now``) and the wall clock
/// (``wallClock``), which starts at the date given to ``init(unixNanoseconds:)`` and moves with it. What it does not
/// control: the transport's socket timeouts (connect, idle, and what is left of a load's deadline when an attempt
/// is sent: a real socket cannot be advanced), the Redis round trips of fleet coordination and the Redis clock its
/// shared limits are counted on, and a service's shutdown grace period (docs/loader.md).
public final class ManualClock: Sendable {
    private struct Sleeper {
        var id: UInt64
        var deadline: Deadline
        /// Whether it counts in ``sleepers`` (a load waiting on the clock) or is a timer racing work in progress.
        var counted: Bool
        var continuation: UnsafeContinuation<Void, any Error>
    }

    private struct Watcher {
        var count: Int
        var includingTimers: Bool
        var shot: OneShot<Bool>
    }

    private struct State {
        var now: Deadline
        var sleepers: [Sleeper] = []
        var watchers: [Watcher] = []
        var nextID: UInt64 = 0

        var counted: Int { sleepers.reduce(0) { $0 + ($1.counted ? 1 : 0) } }

        func count(includingTimers: Bool) -> Int { includingTimers ? sleepers.count : counted }

        /// Takes the watchers whose count is reached.
        mutating func satisfiedWatchers() -> [OneShot<Bool>] {
            guard !watchers.isEmpty else { return [] }
            let (loads, all) = (counted, sleepers.count)
            let reached = { (w: Watcher) in w.count <= (w.includingTimers ? all : loads) }
            let ready = watchers.filter(reached).map(\.shot)
            watchers.removeAll(where: reached)
            return ready
        }
    }

    private let state: Mutex<State>
    /// Where the clock started, on both scales.
    private let origin: Deadline
    private let wallOrigin: Int64

    /// A clock reading the wall-clock time `unixNanoseconds` (nanoseconds since the Unix epoch; the real time by
    /// default), whose monotonic reading starts at the real monotonic clock's.
    public init(unixNanoseconds: Int64 = WallClock.system.now()) {
        let start = Deadline.now()
        self.origin = start
        self.wallOrigin = unixNanoseconds
        self.state = Mutex(State(now: start))
    }

    /// The clock's monotonic time, as a `ContinuousClock` instant.
    public var now: ContinuousClock.Instant { deadline.instant }

    /// How far the clock was advanced since it was made.
    public var elapsed: Duration { deadline - origin }

    /// The wall clock that moves with this one (what the loader's cache, Retry-After dates and authorisers read).
    public var wallClock: WallClock {
        WallClock { [self] in wallNanoseconds }
    }

    /// How many loads are waiting on the clock now (for a rate limit, a back-off, a Retry-After or a fleet wait),
    /// not counting the timeouts that race work in progress (an authoriser call's), which ``advance(by:)`` fires too.
    public var sleepers: Int { state.withLock { $0.counted } }

    /// How many timeouts racing work in progress wait on the clock now (an authoriser call's, which the loader
    /// bounds by the authoriser's `timeout`).
    public var timers: Int { state.withLock { $0.sleepers.count - $0.counted } }

    /// Moves the clock forward by `duration` (a negative or zero duration does nothing: the clock is monotonic), and
    /// wakes every sleeper whose instant is reached, in the order of their instants (those with the same instant in
    /// the order they began to sleep). They run once this returns, and then read the new time.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        move { $0 + duration }
    }

    /// Moves the clock forward to `instant` (an instant not after ``now`` does nothing), waking the sleepers it
    /// reaches as ``advance(by:)`` does.
    public func advance(to instant: ContinuousClock.Instant) {
        let target = Deadline(instant)
        move { max($0, target) }
    }

    /// Returns once at least `count` loads sleep on the clock (``sleepers``; with `includingTimers`, ``sleepers``
    /// and ``timers`` together), so that a test advances it only after the load under test waits; at once when they
    /// already do.
    ///
    /// - Throws: a `timeout` `CourierError` when they do not within `timeout` of real time (a load that never
    ///   sleeps, or fewer loads than expected).
    public func waitForSleepers(
        _ count: Int = 1, includingTimers: Bool = false, timeout: Duration = .seconds(10)
    ) async throws(CourierError) {
        let shot = OneShot<Bool>()
        let ready = state.withLock { s -> Bool in
            if s.count(includingTimers: includingTimers) >= count { return true }
            s.watchers.append(Watcher(count: count, includingTimers: includingTimers, shot: shot))
            return false
        }
        if ready { return }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            shot.resume(false)
        }
        let reached = await shot.wait()
        timer.cancel()
        guard reached else {
            state.withLock { s in s.watchers.removeAll { $0.shot === shot } }
            throw CourierError(
                .timeout, "\(sleepers) of the \(count) expected loads were sleeping on the manual clock after \(DurationFormat.format(timeout))"
            )
        }
    }

    // MARK: - For the loader

    /// The clock's monotonic time.
    package var deadline: Deadline { state.withLock { $0.now } }

    /// The wall-clock time, in nanoseconds since the Unix epoch.
    package var wallNanoseconds: Int64 {
        let elapsed = deadline - origin
        return wallOrigin &+ elapsed.nanosecondsClamped
    }

    /// Sleeps until the clock reaches `deadline` (returns at once when it has); throws `CancellationError` when the
    /// task or the current ``CancellationScope`` is cancelled first. `counted`: whether the sleep is a load's wait
    /// (counted in ``sleepers``) rather than a timeout racing other work.
    package func sleep(until deadline: Deadline, counted: Bool = true) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await CancellationScope.withCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let (resume, watchers) = state.withLock { s -> (Result<Void, any Error>?, [OneShot<Bool>]) in
                    if CancellationScope.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= s.now { return (.success(()), []) }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, counted: counted, continuation: continuation))
                    return (nil, s.satisfiedWatchers())
                }
                if let resume { continuation.resume(with: resume) }
                for watcher in watchers { watcher.resume(true) }
            }
        } onCancel: { [self] in
            let woken = state.withLock { s -> UnsafeContinuation<Void, any Error>? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: index).continuation
            }
            woken?.resume(throwing: CancellationError())
        }
    }

    /// Sets the time to `next(now)` and resumes the sleepers it reaches, in order.
    private func move(_ next: (Deadline) -> Deadline) {
        let due = state.withLock { s -> [Sleeper] in
            s.now = next(s.now)
            let now = s.now
            let due = s.sleepers.filter { $0.deadline <= now }
            guard !due.isEmpty else { return [] }
            s.sleepers.removeAll { $0.deadline <= now }
            return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
