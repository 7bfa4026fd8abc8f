import CourierCore
import CourierTestSupport
import Testing

@testable import CourierKit

/// The pure retry decisions, with a fixed clock and a seeded generator.
@Suite struct RetryPlannerTests {
    let t0 = Deadline.now()

    func policy(jitter: BackoffPolicy.Jitter = .none, max: Duration? = .seconds(1)) -> RetryPolicy {
        var p = RetryPolicy.builtIn
        p.conditions = [.status(503), .connectError]
        p.backoff = BackoffPolicy(initial: .milliseconds(100), max: max, multiplier: 2, jitter: jitter)
        return p
    }

    @Test func backoffGrowsAndIsCappedWithoutJitter() {
        var planner = RetryPlanner(retry: policy(), maxAttempts: 10, retriesAllowed: true, deadline: t0 + .seconds(60))
        var random = SplitMix64(seed: 1)
        var delays: [Duration] = []
        for _ in 0..<6 {
            planner.attemptStarted()
            guard case .retry(let at) = planner.decide(after: .status(503), wait: nil, now: t0, using: &random) else {
                Issue.record("no retry")
                return
            }
            planner.budgetGranted()
            delays.append(at - t0)
        }
        #expect(delays.map { ($0.seconds * 1000).rounded() } == [100, 200, 400, 800, 1000, 1000])
        #expect(planner.retries == 6)
    }

    @Test func fullJitterStaysWithinItsBound() {
        var random = SplitMix64(seed: 42)
        var seen: [Double] = []
        for _ in 0..<200 {
            var planner = RetryPlanner(retry: policy(jitter: .full), maxAttempts: 3, retriesAllowed: true, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            guard case .retry(let at) = planner.decide(after: .connectError, wait: nil, now: t0, using: &random) else {
                Issue.record("no retry")
                return
            }
            seen.append((at - t0).seconds)
        }
        #expect(seen.allSatisfy { $0 >= 0 && $0 <= 0.1 + 1e-9 })
        #expect(Set(seen.map { ($0 * 100).rounded() }).count > 3, "full jitter should spread the delays")
    }

    @Test func conditionsMethodsAttemptsAndDeadlineEndRetries() {
        var random = SplitMix64(seed: 7)
        do {
            var planner = RetryPlanner(retry: policy(), maxAttempts: 3, retriesAllowed: true, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            #expect(planner.decide(after: .status(500), wait: nil, now: t0, using: &random) == .giveUp(.notRetryable))
        }
        do {
            var planner = RetryPlanner(retry: policy(), maxAttempts: 3, retriesAllowed: true, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            #expect(planner.decide(after: nil, wait: nil, now: t0, using: &random) == .giveUp(.notRetryable))
        }
        do {
            var planner = RetryPlanner(retry: policy(), maxAttempts: 3, retriesAllowed: false, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            #expect(planner.decide(after: .status(503), wait: nil, now: t0, using: &random) == .giveUp(.methodNotRetryable))
        }
        do {
            var planner = RetryPlanner(retry: policy(), maxAttempts: 2, retriesAllowed: true, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            #expect(planner.decide(after: .status(503), wait: nil, now: t0, using: &random) == .retry(at: t0 + .milliseconds(100)))
            planner.budgetGranted()
            planner.attemptStarted()
            #expect(planner.decide(after: .status(503), wait: nil, now: t0, using: &random) == .giveUp(.attemptsExhausted))
        }
        do {
            // A 401 refresh retry does not use up an attempt.
            var planner = RetryPlanner(retry: policy(), maxAttempts: 1, retriesAllowed: true, deadline: t0 + .seconds(60))
            planner.attemptStarted()
            planner.attemptStarted(counted: false)
            #expect(planner.countedAttempts == 1)
        }
        do {
            var planner = RetryPlanner(retry: policy(), maxAttempts: 5, retriesAllowed: true, deadline: t0 + .milliseconds(50))
            planner.attemptStarted()
            #expect(planner.decide(after: .status(503), wait: nil, now: t0, using: &random) == .giveUp(.pastDeadline))
        }
    }

    @Test func retryAfterOutweighsAShorterBackoffAndTheBudgetHasTheLastWord() {
        var random = SplitMix64(seed: 9)
        var planner = RetryPlanner(retry: policy(), maxAttempts: 5, retriesAllowed: true, deadline: t0 + .seconds(60))
        planner.attemptStarted()
        #expect(planner.decide(after: .status(503), wait: .seconds(2), now: t0, using: &random) == .retry(at: t0 + .seconds(2)))
        #expect(planner.budgetRefused() == .budgetExhausted)
        #expect(planner.retries == 0)
        // Finished: nothing more is proposed.
        #expect(planner.decide(after: .status(503), wait: nil, now: t0, using: &random) == .giveUp(.notRetryable))
    }
}
