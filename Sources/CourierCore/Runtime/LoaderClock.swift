/// Where a data-loader service reads time and waits: the one clock of its rate limits, back-offs, Retry-After
/// pauses, fleet waits, deadlines, authoriser timeouts, token expiry, fallback cool-downs and cache freshness
/// (`DataLoaderService.Configuration.clock`). Its wall-clock reading (``wall``) is derived from it, so the two
/// never drift apart.
///
/// ``system`` (the default) reads `CLOCK_MONOTONIC` and `CLOCK_REALTIME` and sleeps with `Task.sleep`;
/// ``manual(_:)`` hands everything to a ``ManualClock`` a test advances. A plain enum inside, not a protocol: the
/// system clock costs a load one test of a tag per reading, no existential call.
public struct LoaderClock: Sendable {
    private enum Source: Sendable {
        case system
        case manual(ManualClock)
    }

    private let source: Source

    /// The system's clocks.
    public static var system: LoaderClock { LoaderClock(source: .system) }

    /// `clock`, which moves only when it is advanced.
    public static func manual(_ clock: ManualClock) -> LoaderClock {
        LoaderClock(source: .manual(clock))
    }

    /// The manual clock, when this is one.
    public var manualClock: ManualClock? {
        guard case .manual(let clock) = source else { return nil }
        return clock
    }

    /// The wall clock (nanoseconds since the Unix epoch) that goes with this clock.
    public var wall: WallClock {
        switch source {
        case .system: return .system
        case .manual(let clock): return clock.wallClock
        }
    }

    // MARK: - For the loader

    /// The monotonic time.
    package func now() -> Deadline {
        switch source {
        case .system: return Deadline.now()
        case .manual(let clock): return clock.deadline
        }
    }

    /// The wall-clock time in seconds since the Unix epoch.
    package func wallSeconds() -> Double {
        switch source {
        case .system: return WallClock.system.seconds
        case .manual(let clock): return Double(clock.wallNanoseconds) / 1_000_000_000
        }
    }

    /// Sleeps until `deadline` on this clock; throws `CancellationError` when the task or the current
    /// ``CancellationScope`` is cancelled first.
    package func sleep(until deadline: Deadline) async throws {
        switch source {
        case .system: try await CancellationScope.sleep(until: deadline.instant)
        case .manual(let clock): try await clock.sleep(until: deadline)
        }
    }

    /// Sleeps for `duration` as a timeout racing other work (a manual clock does not count it among its
    /// ``ManualClock/sleepers``). On the system clock it answers the task's cancellation only, as `Task.sleep` does.
    package func sleepAsTimeout(for duration: Duration) async throws {
        switch source {
        case .system: try await Task.sleep(for: duration)
        case .manual(let clock): try await clock.sleep(until: clock.deadline + duration, counted: false)
        }
    }

    /// `deadline` (on this clock) as an instant of the real monotonic clock, for the transport, whose socket
    /// timeouts are real: the same instant on the system clock; on a manual one, now plus what is left of it.
    package func realDeadline(_ deadline: Deadline) -> Deadline {
        switch source {
        case .system: return deadline
        case .manual(let clock):
            if deadline == .distantFuture { return deadline }
            return Deadline.now() + (deadline - clock.deadline)
        }
    }
}
