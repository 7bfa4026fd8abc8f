import CourierCore
import CourierHTTPCache
import CourierTestSupport
import Testing

@testable import CourierKit

/// The cache stage of the load state machine as traces: what a lookup's finding, a 304, a failing origin and
/// the offline switch lead to. No server, no clock, no disk.
@Suite struct LoadStateMachineCacheTests {
    /// Payloads as strings: a response by its status ("r304"), the stored response "stored" (freshened: "fresh"),
    /// a failure by its reason, a redirect's next request by its target.
    typealias Machine = LoadStateMachine<String, String, String, String>
    let t0 = Deadline.now()

    func machine(
        _ role: LoadCacheRole = .lookUp(forceRevalidation: false, onlyIfCached: false), offline: Bool = false,
        maxAttempts: Int = 1
    ) -> Machine {
        var retry = RetryPolicy.builtIn
        retry.conditions = [.status(503), .connectError]
        retry.backoff = BackoffPolicy(initial: .milliseconds(100), max: .seconds(1), multiplier: 2, jitter: .none)
        return Machine(
            retry: retry, maxAttempts: maxAttempts, retriesAllowed: true, deadline: t0 + .seconds(60), hasAuthoriser: false,
            cache: role, offline: offline
        )
    }

    func finding(
        _ decision: ReuseDecision, fresh: Bool = false, staleIfError: Bool = false, offline: Bool = true, validators: Bool = true
    ) -> (finding: LoadCacheFinding, stored: String) {
        (.init(decision: decision, isFresh: fresh, staleIfError: staleIfError, servableOffline: offline, hasValidators: validators), "stored")
    }

    @Test func aFreshFindingIsTheAnswerWithNoAttempt() {
        var m = machine()
        #expect(m.start() == [.lookUpCache])
        #expect(m.cacheLookedUp(finding(.fresh, fresh: true)) == [.deliverStored("stored", .hit)])
        #expect(m.attempt == 0)
    }

    @Test func nothingStoredIsAMissThenAnAttemptWhoseResponseIsStoredBeforeDelivery() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        #expect(m.cacheLookedUp(nil) == [.cacheMiss, .admit])
        #expect(m.admitted(at: t0, now: t0) == [.send(attempt: 1)])
        #expect(m.responseArrived("r200", status: 200, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.deliver("r200", store: true, stored: nil)])
    }

    @Test func aStaleFindingIsRevalidatedAndA304AnswersFromTheStore() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        _ = m.start()
        #expect(m.cacheLookedUp(finding(.revalidate)) == [.revalidate("stored"), .admit])
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r304", status: 304, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.freshenStored("stored", notModified: "r304")])
        #expect(m.freshened("fresh") == [.deliverStored("fresh", .revalidated)])
    }

    @Test func a304ThatDoesNotMatchIsAskedAgainWithoutConditionsAndDoesNotCountAsAnAttempt() {
        var m = machine(maxAttempts: 1)
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.cacheLookedUp(finding(.revalidate))
        _ = m.admitted(at: t0, now: t0)
        _ = m.responseArrived("r304", status: 304, retryAfter: nil, redirect: nil, now: t0, using: &random)
        #expect(m.freshened(nil) == [.dropConditions, .admit])
        _ = m.admitted(at: t0, now: t0)
        // Without conditions, a 304 is an ordinary (unstorable) response.
        #expect(m.responseArrived("r304", status: 304, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.deliver("r304", store: true, stored: "stored")])
    }

    @Test func aStaleFindingWithoutValidatorsGoesOutUnconditionally() {
        var m = machine()
        _ = m.start()
        #expect(m.cacheLookedUp(finding(.revalidate, validators: false)) == [.cacheMiss, .admit])
    }

    @Test func staleWhileRevalidateAnswersAndRevalidatesInTheBackground() {
        var m = machine()
        _ = m.start()
        #expect(m.cacheLookedUp(finding(.staleWhileRevalidate)) == [.revalidateInBackground("stored"), .deliverStored("stored", .stale(.staleWhileRevalidate))])
        var background = machine(.lookUp(forceRevalidation: true, onlyIfCached: false))
        _ = background.start()
        #expect(background.cacheLookedUp(finding(.fresh, fresh: true)) == [.revalidate("stored"), .admit])
    }

    @Test func aFailingOriginIsAnsweredFromTheStoreOnlyWithinStaleIfError() {
        var random = SplitMix64(seed: 1)
        var allowed = machine(maxAttempts: 2)
        _ = allowed.start()
        _ = allowed.cacheLookedUp(finding(.revalidate, staleIfError: true))
        _ = allowed.admitted(at: t0, now: t0)
        // Retries come first; stale-if-error answers only when the origin's failure is final.
        #expect(allowed.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random)
            == [.proposeRetry(at: t0 + .milliseconds(100), reason: "status 503")])
        _ = allowed.budget(granted: true, now: t0)
        _ = allowed.retryWaited()
        _ = allowed.admitted(at: t0, now: t0)
        #expect(allowed.failed("refused", condition: .connectError, kind: .connect, cancelled: false, reason: "refused", now: t0, using: &random)
            == [.gaveUp(reason: "refused", why: .attemptsExhausted), .deliverStored("stored", .stale(.originFailed(error: .connect)))])

        var refused = machine()
        _ = refused.start()
        _ = refused.cacheLookedUp(finding(.revalidate, staleIfError: false))
        _ = refused.admitted(at: t0, now: t0)
        #expect(refused.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random).last == .deliver("r503", store: true, stored: "stored"))

        var cancelled = machine()
        _ = cancelled.start()
        _ = cancelled.cacheLookedUp(finding(.revalidate, staleIfError: true))
        _ = cancelled.admitted(at: t0, now: t0)
        #expect(cancelled.failed("gone", condition: nil, kind: .cancelled, cancelled: true, reason: "gone", now: t0, using: &random) == [.fail("gone")])
    }

    @Test func offlineAnswersFromTheStoreOrFails() {
        var stale = machine(offline: true)
        _ = stale.start()
        #expect(stale.cacheLookedUp(finding(.revalidate)) == [.deliverStored("stored", .stale(.offline))])
        var fresh = machine(offline: true)
        _ = fresh.start()
        #expect(fresh.cacheLookedUp(finding(.fresh, fresh: true)) == [.deliverStored("stored", .hit)])
        var strict = machine(offline: true)
        _ = strict.start()
        #expect(strict.cacheLookedUp(finding(.revalidate, offline: false)) == [.failOffline])
        var nothing = machine(offline: true)
        _ = nothing.start()
        #expect(nothing.cacheLookedUp(nil) == [.failOffline])
        var uncached = machine(.none, offline: true)
        #expect(uncached.start() == [.failOffline])
    }

    @Test func onlyIfCachedWithNothingUsableIsUnsatisfiable() {
        var m = machine(.lookUp(forceRevalidation: false, onlyIfCached: true))
        _ = m.start()
        #expect(m.cacheLookedUp(nil) == [.answerUnsatisfiable])
    }

    @Test func anUnsafeMethodsResponseInvalidatesBeforeItIsDeliveredOrFollowed() {
        var random = SplitMix64(seed: 1)
        var m = machine(.invalidate)
        #expect(m.start() == [.admit])
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r204", status: 204, retryAfter: nil, redirect: nil, now: t0, using: &random) == [.invalidateStored("r204"), .deliver("r204", store: false, stored: nil)])
        var redirected = machine(.invalidate)
        _ = redirected.start()
        _ = redirected.admitted(at: t0, now: t0)
        #expect(redirected.responseArrived("r303", status: 303, retryAfter: nil, redirect: "next", now: t0, using: &random)
            == [.invalidateStored("r303"), .discard("r303"), .followRedirect("next")])
    }

    @Test func a5xxAStoredResponseAnswersInsteadOfIsDiscardedNotLeftOnItsConnection() {
        var random = SplitMix64(seed: 1)
        var m = machine()
        _ = m.start()
        _ = m.cacheLookedUp(finding(.revalidate, staleIfError: true))
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, now: t0, using: &random)
            == [.gaveUp(reason: "status 503", why: .attemptsExhausted), .discard("r503"),
                .deliverStored("stored", .stale(.originFailed(error: .httpStatus)))])
    }
}
