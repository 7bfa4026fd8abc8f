package import CourierCore

/// The worst a route allows one request to do: how many attempts it may make, how long it may wait between
/// them, and how fast one client may send requests on its endpoint key. Pure arithmetic over the policy values.
package struct RouteWorstCase: Hashable, Sendable {
    /// What limits ``longestWait``.
    package enum WaitBound: String, Hashable, Sendable, Encodable {
        /// The request is never retried, so it never waits.
        case noRetries = "no-retries"
        /// The back-off curve: the sum of its worst delays fits in `timeouts.total`.
        case backoff
        /// A `Retry-After` header up to the policy's cap can make a delay longer than the back-off curve would,
        /// and the sum still fits in `timeouts.total`.
        case retryAfterCap = "retry-after-cap"
        /// The delays could add up to more than `timeouts.total`; the total timeout ends the request first.
        case totalTimeout = "timeouts.total"
    }

    /// Attempts one request may make, the first included (1 when the request is not retried).
    package var attempts: Int
    /// Why the request is or is not retried, in one sentence.
    package var retryReason: String
    /// The longest delay before each retry (index 0 is the delay before the first retry), `Retry-After`
    /// considered.
    package var delays: [Duration]
    /// The back-off curve's own worst delay before each retry, without `Retry-After`.
    package var backoffDelays: [Duration]
    /// Whether a `Retry-After` header (up to ``retryAfterCap``) may stand in for a shorter back-off delay:
    /// `respect-retry-after` is on and `retry.on` has a status code.
    package var retryAfterApplies: Bool
    /// The longest `Retry-After` honoured.
    package var retryAfterCap: Duration
    /// The sum of ``delays``, before `timeouts.total` is applied.
    package var unboundedWait: Duration
    /// The longest time the request can spend waiting between attempts: ``unboundedWait`` capped at
    /// `timeouts.total`.
    package var longestWait: Duration
    /// Which bound gives ``longestWait``.
    package var waitBound: WaitBound
    /// The deadline for the whole request, retries included (`timeouts.total`).
    package var totalTimeout: Duration
    /// The endpoint key's token bucket; nil = unlimited.
    package var rateLimit: RateLimit?

    /// Retries for `method` under `retry`, within `timeouts`, limited by `rateLimit`.
    package init(retry: RetryPolicy, method: HTTPMethod, timeouts: TimeoutPolicy, rateLimit: RateLimit?) {
        totalTimeout = timeouts.total
        self.rateLimit = rateLimit
        let retried: Bool
        if retry.maxAttempts <= 1 {
            retried = false
            retryReason = "retry.max-attempts is \(retry.maxAttempts), so a request is never retried"
        } else if !retry.methods.contains(method) {
            retried = false
            retryReason = "\(method) is not in retry.methods, so it is never retried"
        } else if !retry.allowsRetry(of: method) {
            retried = false
            retryReason = "\(method) is not idempotent and no idempotency key is configured, so it is never retried"
        } else if retry.conditions.isEmpty {
            retried = false
            retryReason = "retry.on is empty, so nothing triggers a retry"
        } else {
            retried = true
            let on = retry.conditions.sorted().map(\.description).joined(separator: ", ")
            retryReason = "\(method) is retried up to \(retry.maxAttempts - 1) times on \(on)"
        }
        attempts = retried ? retry.maxAttempts : 1

        retryAfterCap = retry.retryAfterCap
        let retryAfterApplies = retried && retry.respectRetryAfter
            && retry.conditions.contains { if case .status = $0 { return true } else { return false } }
        self.retryAfterApplies = retryAfterApplies
        var delays: [Duration] = []
        var backoffDelays: [Duration] = []
        var raisedByRetryAfter = false
        if retried {
            for n in 1..<retry.maxAttempts {
                let backoff = retry.backoff.worstDelay(beforeRetry: n)
                backoffDelays.append(backoff)
                if retryAfterApplies && retry.retryAfterCap > backoff {
                    delays.append(retry.retryAfterCap)
                    raisedByRetryAfter = true
                } else {
                    delays.append(backoff)
                }
            }
        }
        self.delays = delays
        self.backoffDelays = backoffDelays
        unboundedWait = delays.reduce(.zero, +)
        if !retried {
            longestWait = .zero
            waitBound = .noRetries
        } else if unboundedWait > timeouts.total {
            longestWait = timeouts.total
            waitBound = .totalTimeout
        } else {
            longestWait = unboundedWait
            waitBound = raisedByRetryAfter ? .retryAfterCap : .backoff
        }
    }

    /// The most requests one client can send on this endpoint key within one second: a full bucket (`burst`)
    /// plus the tokens added during that second. nil = unlimited.
    package var peakRequestsInOneSecond: Double? {
        rateLimit.map { Double($0.burst) + $0.requestsPerSecond }
    }

    /// The sustained rate once the bucket is empty. nil = unlimited.
    package var sustainedRequestsPerSecond: Double? { rateLimit?.requestsPerSecond }
}
