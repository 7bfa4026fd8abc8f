import CourierCore
import CourierLint
import Testing

@Suite struct RouteWorstCaseTests {
    let timeouts = TimeoutPolicy(connect: .seconds(5), idle: .seconds(30), total: .seconds(60))

    func retry(
        attempts: Int, initial: Duration = .milliseconds(500), max: Duration? = .seconds(30), jitter: BackoffPolicy.Jitter = .full,
        on: Set<RetryPolicy.Condition> = [.connectError, .timeout, .status(503)], respectRetryAfter: Bool = false,
        cap: Duration = .seconds(300)
    ) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: attempts, conditions: on, methods: [.get, .head, .put, .post],
            backoff: BackoffPolicy(initial: initial, max: max, multiplier: 2, jitter: jitter),
            respectRetryAfter: respectRetryAfter, retryAfterCap: cap, budget: nil, idempotencyKeyHeader: nil
        )
    }

    @Test func backoffBoundsTheWaitWhenItFits() {
        // 500ms + 1s + 2s + 4s = 7.5s, well under 60s.
        let w = RouteWorstCase(retry: retry(attempts: 5), method: .get, timeouts: timeouts, rateLimit: nil)
        #expect(w.attempts == 5)
        #expect(w.delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)])
        #expect(w.longestWait == .milliseconds(7500))
        #expect(w.waitBound == .backoff)
        #expect(w.peakRequestsInOneSecond == nil)
    }

    @Test func totalTimeoutBoundsALongCurve() {
        // 500ms·2^(n-1) capped at 30s over 9 retries: .5+1+2+4+8+16+30+30+30 = 121.5s > 60s.
        let w = RouteWorstCase(retry: retry(attempts: 10), method: .get, timeouts: timeouts, rateLimit: nil)
        #expect(w.unboundedWait == .milliseconds(121_500))
        #expect(w.longestWait == .seconds(60))
        #expect(w.waitBound == .totalTimeout)
    }

    @Test func retryAfterCapRaisesEachDelay() {
        let w = RouteWorstCase(
            retry: retry(attempts: 3, respectRetryAfter: true, cap: .seconds(10)), method: .get, timeouts: timeouts,
            rateLimit: nil
        )
        #expect(w.delays == [.seconds(10), .seconds(10)])
        #expect(w.longestWait == .seconds(20))
        #expect(w.waitBound == .retryAfterCap)
    }

    @Test func retryAfterDoesNotApplyWithoutStatusConditions() {
        let w = RouteWorstCase(
            retry: retry(attempts: 3, on: [.connectError], respectRetryAfter: true, cap: .seconds(10)), method: .get,
            timeouts: timeouts, rateLimit: nil
        )
        #expect(w.delays == [.milliseconds(500), .seconds(1)])
        #expect(w.waitBound == .backoff)
    }

    @Test func nonRetryableMethodsMakeOneAttempt() {
        let notListed = RouteWorstCase(retry: retry(attempts: 5), method: .patch, timeouts: timeouts, rateLimit: nil)
        #expect(notListed.attempts == 1)
        #expect(notListed.longestWait == .zero)
        #expect(notListed.waitBound == .noRetries)
        #expect(notListed.retryReason.contains("PATCH is not in retry.methods"))
        // POST is listed but not idempotent, and no idempotency key is configured.
        let post = RouteWorstCase(retry: retry(attempts: 5), method: .post, timeouts: timeouts, rateLimit: nil)
        #expect(post.attempts == 1)
        #expect(post.retryReason.contains("not idempotent"))
        let once = RouteWorstCase(retry: retry(attempts: 1), method: .get, timeouts: timeouts, rateLimit: nil)
        #expect(once.attempts == 1)
        #expect(once.delays.isEmpty)
    }

    @Test func decorrelatedJitterTriplesUpToTheCap() {
        let w = RouteWorstCase(
            retry: retry(attempts: 4, initial: .seconds(1), max: .seconds(5), jitter: .decorrelated), method: .get,
            timeouts: timeouts, rateLimit: nil
        )
        #expect(w.delays == [.seconds(3), .seconds(5), .seconds(5)])
    }

    @Test func rateLimitGivesSustainedAndPeakRates() {
        let w = RouteWorstCase(
            retry: retry(attempts: 1), method: .get, timeouts: timeouts,
            rateLimit: RateLimit(requestsPerSecond: 2.5, burst: 5)
        )
        #expect(w.sustainedRequestsPerSecond == 2.5)
        #expect(w.peakRequestsInOneSecond == 7.5)
    }
}
