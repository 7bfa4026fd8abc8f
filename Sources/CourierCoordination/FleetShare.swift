package import CourierCore

/// What one instance may use of a fleet limit on its own, while Redis cannot be reached (`on-unavailable: local`).
package enum FleetShare {
    /// `limit` split evenly over `liveInstances` (the last count seen; below 1 taken as 1): the rate divided by
    /// the count, and the burst divided the same way, rounded up, at least 1. Enforce it with the process-local
    /// limiter, as a `process`-scoped limit.
    ///
    /// Approximate: the fleet as a whole keeps the limit only while every instance runs on its own share and the
    /// count is right; when instances come or go meanwhile, the shares are of a count that is out of date (more
    /// instances than counted exceed the limit, fewer leave part of it unused). Rounding the burst up lets the
    /// fleet burst by up to `liveInstances − 1` requests more than the limit's own burst.
    package static func local(_ limit: RateLimit, liveInstances: Int) -> RateLimit {
        let count = max(1, liveInstances)
        let burst = max(1, limit.burst)
        let share = burst / count + (burst % count == 0 ? 0 : 1)
        return RateLimit(requestsPerSecond: limit.requestsPerSecond / Double(count), burst: share)
    }
}
