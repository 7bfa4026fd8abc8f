internal import CourierCore

extension BackoffPolicy {
    /// The delay before retry `retry` (1-based), drawn with this policy's jitter.
    ///
    /// - Parameters:
    ///   - previous: the delay drawn before the previous retry (decorrelated jitter grows from it; ignored by
    ///     the other modes). Pass nil before the first retry.
    ///   - random: the source of randomness (inject a seeded generator in tests).
    package func delay(
        beforeRetry retry: Int,
        previous: Duration?,
        using random: inout some RandomNumberGenerator
    ) -> Duration {
        let base = baseDelay(beforeRetry: retry).seconds
        let seconds: Double
        switch jitter {
        case .none:
            seconds = base
        case .full:
            seconds = base > 0 ? Double.random(in: 0...base, using: &random) : 0
        case .equal:
            seconds = base / 2 + (base > 0 ? Double.random(in: 0...(base / 2), using: &random) : 0)
        case .decorrelated:
            let low = initial.seconds
            let high = Swift.max(low, (previous ?? initial).seconds * 3)
            let drawn = Double.random(in: low...high, using: &random)
            seconds = self.max.map { min($0.seconds, drawn) } ?? drawn
        }
        return .seconds(seconds)
    }
}
