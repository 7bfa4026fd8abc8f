#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// Where Courier reads wall-clock time, in nanoseconds since the Unix epoch: the one clock for what is dated by
/// the calendar rather than measured (a record's times, which outlive the process and are shared between
/// processes; a cached response's age and freshness; a Retry-After date; a token's expiry). A service derives it
/// from its one clock (``LoaderClock/wall``, `DataLoaderService.Configuration.clock`) and hands it to its cache and
/// authorisers, so a test that advances a ``ManualClock`` moves them all. Durations and deadlines use the
/// monotonic clock instead.
public struct WallClock: Sendable {
    /// Returns the current time in nanoseconds since the Unix epoch.
    public let now: @Sendable () -> Int64

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// The current time in seconds since the Unix epoch.
    public var seconds: Double { Double(now()) / 1_000_000_000 }

    /// `CLOCK_REALTIME` (`clock_gettime` reads the vDSO: no system call, nothing to retry).
    public static let system = WallClock {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
