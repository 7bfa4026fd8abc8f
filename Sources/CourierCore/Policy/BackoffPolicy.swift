/// The delay before each retry: exponential growth from `initial` by `multiplier`, capped at `max`, with jitter.
///
/// The base delay before retry `n` (n = 1 for the first retry) is `min(max, initial × multiplier^(n-1))`.
/// Jitter then spreads it so that a fleet of clients does not retry in lock-step; see ``Jitter``.
public struct BackoffPolicy: Hashable, Sendable {
    /// How a delay is randomised. These are the curves from the AWS Architecture Blog's "Exponential Backoff
    /// and Jitter"; `full` is the default.
    public enum Jitter: String, Hashable, Sendable, CaseIterable {
        /// Exactly the base delay.
        case none
        /// Uniform in `0 ... base`.
        case full
        /// Uniform in `base/2 ... base`.
        case equal
        /// Uniform in `initial ... previous × 3`, capped at `max` (independent of the attempt number).
        case decorrelated
    }

    public package(set) var initial: Duration
    /// The cap on one delay; nil means no cap (the linter warns about that).
    public package(set) var max: Duration?
    public package(set) var multiplier: Double
    public package(set) var jitter: Jitter

    package init(initial: Duration, max: Duration?, multiplier: Double, jitter: Jitter) {
        self.initial = initial
        self.max = max
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// Built-in defaults: 500 ms, doubling, capped at 30 s, full jitter.
    public static let builtIn = BackoffPolicy(initial: .milliseconds(500), max: .seconds(30), multiplier: 2, jitter: .full)

    /// The un-jittered delay before retry `retry` (1-based): `min(max, initial × multiplier^(retry-1))`.
    /// This is also the largest delay any jitter mode but `decorrelated` can produce for that retry.
    package func baseDelay(beforeRetry retry: Int) -> Duration {
        let initialSeconds = initial.seconds
        var seconds = initialSeconds * pow(multiplier, Double(Swift.max(0, retry - 1)))
        if let cap = max?.seconds { seconds = Swift.min(seconds, cap) }
        if !seconds.isFinite || seconds > 1e12 { seconds = 1e12 }
        return .seconds(seconds)
    }

    /// The largest delay the curve allows before retry `retry` (1-based), whatever the jitter draws.
    package func worstDelay(beforeRetry retry: Int) -> Duration {
        guard jitter == .decorrelated else { return baseDelay(beforeRetry: retry) }
        // Decorrelated: each delay is at most 3 × the previous one (starting from `initial`), capped at max.
        var seconds = initial.seconds
        for _ in 0..<Swift.max(0, retry) {
            seconds *= 3
            if let cap = max?.seconds, seconds >= cap { return .seconds(cap) }
            if seconds > 1e12 { return .seconds(1e12) }
        }
        return .seconds(seconds)
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    package var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}

/// `pow` without importing the C library into the vocabulary module.
@usableFromInline
func pow(_ base: Double, _ exponent: Double) -> Double {
    guard exponent > 0 else { return 1 }
    var result = 1.0
    var b = base
    var e = Int(exponent)
    while e > 0 {
        if e & 1 == 1 { result *= b }
        b *= b
        e >>= 1
        if !result.isFinite { return .infinity }
    }
    return result
}
