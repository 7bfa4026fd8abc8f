import CourierCore
import CourierTestSupport
import Testing

@testable import CourierKit

/// The load's decisions as traces of events and actions, with instants as parameters and a seeded generator:
/// no server, no clock, no sleep. The payloads are strings: a response is named by its status ("r503"), a failure by
/// its reason, a redirect's next request by its target.
@Suite struct LoadStateMachineTests {
    typealias Machine = LoadStateMachine<String, String, String, String>

    let t0 = Deadline.now()

    func policy(respectRetryAfter: Bool = true) -> RetryPolicy {
        var p = RetryPolicy.builtIn
        p.conditions = [.status(503), .connectError]
        p.backoff = BackoffPolicy(initial: .milliseconds(100), max: .seconds(1), multiplier: 2, jitter: .none)
        p.respectRetryAfter = respectRetryAfter
        p.retryAfterCap = .seconds(30)
        return p
    }

    func machine(authoriser: Bool = false, maxAttempts: Int = 3, respectRetryAfter: Bool = true) -> Machine {
        Machine(
            retry: policy(respectRetryAfter: respectRetryAfter), maxAttempts: maxAttempts, retriesAllowed: true,
            deadline: t0 + .seconds(60), hasAuthoriser: authoriser
        )
    }

    @Test func aPlainLoadIsAdmittedSentAndDelivered() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        #expect(m.start() == [.admit])
        #expect(m.admitted(at: t0, now: t0) == [.send(attempt: 1)])
        #expect(m.responseArrived("r200", status: 200, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.deliver("r200", store: false, stored: nil)])
    }

    @Test func theRateLimitIsWaitedForUnlessItOutlastsTheDeadline() {
        var waits = machine(authoriser: true)
        _ = waits.start()
        #expect(waits.admitted(at: t0 + .milliseconds(200), now: t0) == [.waitForRateLimit(until: t0 + .milliseconds(200))])
        #expect(waits.rateLimitWaited() == [.authorise])
        #expect(waits.authorised() == [.send(attempt: 1)])
        var tooLate = machine()
        _ = tooLate.start()
        #expect(tooLate.admitted(at: t0 + .seconds(61), now: t0) == [.failRateLimitPastDeadline])
    }

    @Test func aRetryableStatusAsksTheBudgetThenWaitsThenStartsAnAttempt() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random)
            == [.proposeRetry(at: t0 + .milliseconds(100), reason: "status 503")])
        #expect(m.budget(granted: true, now: t0) == [.discard("r503"), .waitForRetry(until: t0 + .milliseconds(100), reason: "status 503")])
        #expect(m.retryWaited() == [.admit])
        #expect(m.attempt == 2)
    }

    @Test func aRefusedBudgetDeliversTheResponseOrThrowsTheFailure() {
        var response = machine()
        var random = SplitMix64(seed: 1)
        _ = response.start()
        _ = response.admitted(at: t0, now: t0)
        _ = response.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random)
        #expect(response.budget(granted: false, now: t0) == [.gaveUp(reason: "status 503", why: .budgetExhausted), .deliver("r503", store: false, stored: nil)])

        var failure = machine()
        _ = failure.start()
        _ = failure.admitted(at: t0, now: t0)
        _ = failure.failed("connect: refused", condition: .connectError, kind: .connect, cancelled: false, reason: "connect: refused", now: t0, using: &random)
        #expect(failure.budget(granted: false, now: t0) == [.gaveUp(reason: "connect: refused", why: .budgetExhausted), .fail("connect: refused")])
    }

    @Test func retryAfterIsCappedNotedPausesTheEndpointAndStretchesTheWait() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        let actions = m.responseArrived("r503", status: 503, retryAfter: .seconds(90), redirect: nil, now: t0, using: &random)
        #expect(actions == [
            .noteRetryAfter(requested: .seconds(90), applied: .seconds(30)),
            .pauseEndpoint(until: t0 + .seconds(30)),
            .proposeRetry(at: t0 + .seconds(30), reason: "status 503"),
        ])
        #expect(m.retryAfter == .seconds(30))

        var ignoring = machine(respectRetryAfter: false)
        _ = ignoring.start()
        _ = ignoring.admitted(at: t0, now: t0)
        #expect(ignoring.responseArrived("r503", status: 503, retryAfter: .seconds(5), redirect: nil, now: t0, using: &random) == [
            .noteRetryAfter(requested: .seconds(5), applied: .zero), .proposeRetry(at: t0 + .milliseconds(100), reason: "status 503"),
        ])
    }

    @Test func oneRefreshAfterA401ThenTheSecond401IsTheAnswerAndTheRetryIsNotCounted() {
        var m = machine(authoriser: true, maxAttempts: 1)
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        _ = m.authorised()
        #expect(m.responseArrived("r401", status: 401, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.discard("r401"), .refreshCredentials])
        #expect(m.refreshed() == [.admit])
        _ = m.admitted(at: t0, now: t0)
        #expect(m.authorised() == [.send(attempt: 2)])
        #expect(m.responseArrived("r401", status: 401, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.deliver("r401", store: false, stored: nil)])
        // With one attempt allowed, the refresh retry did not use it up: a 503 now may still be retried.
        var counted = machine(authoriser: true, maxAttempts: 1)
        _ = counted.start()
        _ = counted.admitted(at: t0, now: t0)
        _ = counted.authorised()
        _ = counted.responseArrived("r401", status: 401, retryAfter: nil, redirect: nil, now: t0, using: &random)
        _ = counted.refreshed()
        _ = counted.admitted(at: t0, now: t0)
        _ = counted.authorised()
        #expect(counted.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random)
            == [.gaveUp(reason: "status 503", why: .attemptsExhausted), .deliver("r503", store: false, stored: nil)])
    }

    @Test func aRedirectIsFollowedWhenTheResponseIsFinal() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r302", status: 302, retryAfter: nil, redirect: "next", now: t0, using: &random) == [.discard("r302"), .followRedirect("next")])
    }

    @Test func aStreamedBodyThatBreaksOffAfterDeliveryIsRetriedAndCancellationIsFinal() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r200", status: 200, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.deliver("r200", store: false, stored: nil)])
        // The 200 was not retried, so the planner still has attempts for the break-off.
        #expect(m.failed("cut", condition: .connectError, kind: .connect, cancelled: false, reason: "cut", now: t0, using: &random)
            == [.proposeRetry(at: t0 + .milliseconds(100), reason: "cut")])

        var cancelled = machine()
        _ = cancelled.start()
        _ = cancelled.admitted(at: t0, now: t0)
        #expect(cancelled.failed("gone", condition: .connectError, kind: .connect, cancelled: true, reason: "gone", now: t0, using: &random) == [.fail("gone")])
    }

    @Test func aFailureNoConditionCoversIsFinalWithoutATrace() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        #expect(m.failed("tls-certificate", condition: nil, kind: .connect, cancelled: false, reason: "tls-certificate", now: t0, using: &random) == [.fail("tls-certificate")])
    }
}
