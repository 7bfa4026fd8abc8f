#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where the store reads wall-clock time, in nanoseconds since the Unix epoch.
///
/// Record times are wall-clock times because they outlive the process and are shared between processes; a
/// test injects its own clock.
public struct CacheClock: Sendable {
    /// Returns the current time in nanoseconds since the Unix epoch.
    public let now: @Sendable () -> Int64

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Int64) {
        self.now = now
    }

    /// `CLOCK_REALTIME`.
    public static let system = CacheClock {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
