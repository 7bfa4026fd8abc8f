import CourierCore
import CourierTransport
import CourierTestSupport
import Testing

@Suite struct RateLimiterTests {
    let t0 = ContinuousClock.now

    @Test func burstThenSteadyRateInArrivalOrder() {
        var limiter = RateLimiterStateMachine()
        let limit = RateLimit(requestsPerSecond: 10, burst: 3)
        // Ten requests at the same instant: three go at once, then one every 100 ms, in order.
        let times = (0..<10).map { _ in limiter.admit(key: "h/v1", limit: limit, now: t0) - t0 }
        #expect(times[0] == .zero && times[1] == .zero && times[2] == .zero)
        for i in 3..<10 {
            let expected = Duration.milliseconds(100 * (i - 2))
            #expect(abs((times[i] - expected).seconds) < 1e-6, "request \(i) at \(times[i])")
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func keysAreIndependentAndUnlimitedNeverWaits() {
        var limiter = RateLimiterStateMachine()
        let limit = RateLimit(requestsPerSecond: 1, burst: 1)
        do { let r = limiter.admit(key: "a", limit: limit, now: t0); #expect(r == t0) }
        do { let r = limiter.admit(key: "a", limit: limit, now: t0); #expect(r == t0 + .seconds(1)) }
        do { let r = limiter.admit(key: "b", limit: limit, now: t0); #expect(r == t0) }
        for _ in 0..<100 {
            let at = limiter.admit(key: "c", limit: nil, now: t0)
            #expect(at == t0)
        }
    }

    @Test func aPauseHoldsTheKeyAndThenTheRateResumes() {
        var limiter = RateLimiterStateMachine()
        let limit = RateLimit(requestsPerSecond: 10, burst: 5)
        limiter.pause(key: "k", until: t0 + .seconds(2))
        limiter.pause(key: "k", until: t0 + .seconds(1))  // a shorter pause never shortens the first
        do { let r = limiter.admit(key: "k", limit: limit, now: t0); #expect(r == t0 + .seconds(2)) }
        // After the pause the bucket does not release a whole burst at once.
        do { let r = limiter.admit(key: "k", limit: limit, now: t0); #expect(r == t0 + .seconds(2)) }
        do { let r = limiter.admit(key: "k", limit: nil, now: t0 + .seconds(3)); #expect(r == t0 + .seconds(3)) }
    }

    @Test func anUnlimitedKeyKeepsNoStateButHonoursAPause() {
        var limiter = RateLimiterStateMachine()
        for i in 0..<50 { _ = limiter.admit(key: "k\(i)", limit: nil, now: t0) }
        #expect(limiter.trackedKeys == 0)
        limiter.pause(key: "k1", until: t0 + .seconds(2))
        do { let r = limiter.admit(key: "k1", limit: nil, now: t0 + .seconds(1)); #expect(r == t0 + .seconds(2)) }
        do { let r = limiter.admit(key: "k2", limit: nil, now: t0 + .seconds(1)); #expect(r == t0 + .seconds(1)) }
        // Once the pause is over it is forgotten.
        do { let r = limiter.admit(key: "k1", limit: nil, now: t0 + .seconds(3)); #expect(r == t0 + .seconds(3)) }
        #expect(limiter.pausedUntil(key: "k1") == nil)
    }
}

@Suite struct RetryAfterTests {
    // 1994-11-06T08:49:37Z
    let when = 784_111_777.0

    @Test func allThreeDateFormsAndSeconds() {
        #expect(RetryAfter.delay("120", now: 0) == .seconds(120))
        #expect(RetryAfter.delay(" 7 ", now: 0) == .seconds(7))
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == when)
        #expect(RetryAfter.httpDate("Sunday, 06-Nov-94 08:49:37 GMT") == when)
        #expect(RetryAfter.httpDate("Sun Nov  6 08:49:37 1994") == when)
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:50:07 GMT", now: when) == .seconds(30))
        // A date in the past means "now".
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: when + 100) == .zero)
    }

    @Test(arguments: ["", "-5", "1.5", "soon", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST",
        "Foo, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT"])
    func malformedValuesAreIgnored(_ value: String) {
        #expect(RetryAfter.delay(value, now: when) == nil)
    }

    @Test func hugeSecondsDoNotOverflow() {
        #expect(RetryAfter.delay("99999999999999999999999", now: 0)! > .seconds(1_000_000))
    }
}

@Suite(.onThreadsOfTheirOwn) struct BackoffJitterTests {
    @Test(arguments: BackoffPolicy.Jitter.allCases)
    func delaysStayWithinTheCurveAndGrow(_ jitter: BackoffPolicy.Jitter) {
        let policy = BackoffPolicy(initial: .milliseconds(100), max: .seconds(5), multiplier: 2, jitter: jitter)
        var rng = SplitMix64(seed: 7)
        var means: [Double] = []
        for retry in 1...6 {
            var sum = 0.0
            var previous: Duration?
            for _ in 0..<2000 {
                let d = policy.delay(beforeRetry: retry, previous: previous, using: &rng)
                let base = policy.baseDelay(beforeRetry: retry)
                switch jitter {
                case .none: #expect(d == base)
                case .full: #expect(d >= .zero && d <= base)
                case .equal: #expect(d >= base / 2 && d <= base)
                case .decorrelated:
                    #expect(d >= policy.initial && d <= .seconds(5))
                    #expect(d <= max(policy.initial, (previous ?? policy.initial) * 3))
                }
                if jitter == .decorrelated { previous = d }
                sum += d.seconds
            }
            means.append(sum / 2000)
        }
        if jitter != .decorrelated {
            // The mean delay doubles with each retry until the cap (5 s) bites.
            for i in 1..<5 { #expect(means[i] > means[i - 1] * 1.8, "\(jitter): \(means)") }
        }
    }
}

@Suite struct RetryBudgetTests {
    @Test func capsRetriesAtTheRatioUnderLoad() {
        let t0 = ContinuousClock.now
        var budget = RetryBudgetStateMachine(budget: .init(ratio: 0.2, minPerSecond: 1), origin: t0)
        var allowed = 0
        // 1,000 failing requests over one second: each wants a retry.
        for i in 0..<1000 {
            let now = t0 + .milliseconds(i)
            budget.recordRequest(now: now)
            if budget.tryRetry(now: now) { allowed += 1 }
        }
        // 20 % of 1,000, give or take the one in flight.
        #expect((195...201).contains(allowed), "\(allowed)")
    }

    @Test func aQuietClientMayStillRetry() {
        let t0 = ContinuousClock.now
        var budget = RetryBudgetStateMachine(budget: .init(ratio: 0.2, minPerSecond: 1), origin: t0)
        budget.recordRequest(now: t0)
        do { let r = budget.tryRetry(now: t0); #expect(r) }
    }

    @Test func theWindowSlides() {
        let t0 = ContinuousClock.now
        var budget = RetryBudgetStateMachine(budget: .init(ratio: 0, minPerSecond: 0.5), origin: t0)
        for _ in 0..<5 {
            let ok = budget.tryRetry(now: t0)
            #expect(ok)
        }
        let sixth = budget.tryRetry(now: t0)
        let later = budget.tryRetry(now: t0 + .seconds(5))
        #expect(!sixth && !later)
        do { let r = budget.tryRetry(now: t0 + .seconds(11)); #expect(r) }
    }
}
