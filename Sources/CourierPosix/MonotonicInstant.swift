import CourierCore

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
///
/// Timers, deadlines and the Happy Eyeballs machine use it. Tests build instants from plain numbers, so the
/// state machines never read the clock themselves.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an unspecified start (boot, for the real clock).
    public var nanoseconds: UInt64

    /// Creates an instant from raw nanoseconds.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The current time of the monotonic clock.
    public static func now() -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Syscall.monotonicNanoseconds())
    }

    /// The latest representable instant; used for "never".
    public static let distantFuture = MonotonicInstant(nanoseconds: .max)

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// `lhs` moved forward by `rhs` (negative durations move back); saturates instead of overflowing.
    public static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        let delta = rhs.nanosecondsClamped
        if delta >= 0 {
            let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(UInt64(delta))
            return MonotonicInstant(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return MonotonicInstant(nanoseconds: lhs.nanoseconds > magnitude ? lhs.nanoseconds - magnitude : 0)
    }

    /// The time from `rhs` to `lhs` (negative when `lhs` is earlier).
    public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        if lhs >= rhs {
            return .nanoseconds(Int64(clamping: lhs.nanoseconds - rhs.nanoseconds))
        }
        return .nanoseconds(-Int64(clamping: rhs.nanoseconds - lhs.nanoseconds))
    }

    public var description: String { "\(nanoseconds)ns" }
}
