#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: the one form Courier's instants and
/// deadlines take below the public API. A load's deadline is made once when it starts (or an `execute` when it
/// starts) and is passed unchanged to the transport; the state machines take `now` as a parameter of this type
/// and never read a clock; tests build instants from plain numbers.
///
/// A plain integer, so of a fixed size. `ContinuousClock.Instant` is not `@frozen` in the standard library:
/// every value that holds one is copied and destroyed through value-witness calls, and each such local of an
/// async function is allocated from the task's allocator (issue 11, session 15). Where an instant goes to or comes
/// from a public API that takes a `ContinuousClock.Instant`, it is converted through one process-wide pair of
/// readings of both clocks, so a round trip is exact.
package struct Deadline: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an unspecified start (boot, for the real clock).
    package var nanoseconds: UInt64

    /// Creates an instant from raw nanoseconds.
    package init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The current time of the monotonic clock (`clock_gettime` reads the vDSO: no system call).
    package static func now() -> Deadline {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Deadline(nanoseconds: UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec))
    }

    /// The latest representable instant; used for "never".
    package static let distantFuture = Deadline(nanoseconds: .max)

    package static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// `lhs` moved forward by `rhs` (negative durations move back); saturates instead of overflowing.
    package static func + (lhs: Deadline, rhs: Duration) -> Deadline {
        let delta = rhs.nanosecondsClamped
        if delta >= 0 {
            let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(UInt64(delta))
            return Deadline(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return Deadline(nanoseconds: lhs.nanoseconds > magnitude ? lhs.nanoseconds - magnitude : 0)
    }

    /// `lhs` moved back by `rhs`; saturates.
    package static func - (lhs: Deadline, rhs: Duration) -> Deadline {
        lhs + (.zero - rhs)
    }

    package static func += (lhs: inout Deadline, rhs: Duration) {
        lhs = lhs + rhs
    }

    /// The time from `rhs` to `lhs` (negative when `lhs` is earlier).
    package static func - (lhs: Deadline, rhs: Deadline) -> Duration {
        if lhs >= rhs {
            return .nanoseconds(Int64(clamping: lhs.nanoseconds - rhs.nanoseconds))
        }
        return .nanoseconds(-Int64(clamping: rhs.nanoseconds - lhs.nanoseconds))
    }

    package var description: String { "\(nanoseconds)ns" }

    // MARK: - The public API's edge

    /// One reading of each clock, taken once: the conversions' common origin.
    private static let anchor = (continuous: ContinuousClock.now, monotonic: Deadline.now())

    /// The same instant as `instant`, a `ContinuousClock` instant.
    package init(_ instant: ContinuousClock.Instant) {
        self = Self.anchor.monotonic + (instant - Self.anchor.continuous)
    }

    /// The same instant as a `ContinuousClock.Instant` (for the public API).
    package var instant: ContinuousClock.Instant {
        Self.anchor.continuous + (self - Self.anchor.monotonic)
    }
}
