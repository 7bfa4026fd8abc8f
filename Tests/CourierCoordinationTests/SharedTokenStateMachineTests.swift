import CourierCoordination
import CourierCore
import CourierRedis
import Testing

/// Protocol traces of one shared-token `obtain`: times are plain deadlines, jitter is given.
@Suite struct SharedTokenStateMachineTests {
    private let t0 = Deadline(nanoseconds: 1_000_000_000)
    private let poll = Duration.milliseconds(20) ... Duration.milliseconds(50)
    private let down = RedisError(.unavailable, "connection refused", backend: "127.0.0.1:6379")

    private func machine(_ fallback: TokenStoreFallback = .local, wait: Duration = .seconds(1)) -> SharedTokenStateMachine {
        SharedTokenStateMachine(deadline: t0 + wait, poll: poll, fallback: fallback)
    }

    @Test func aUsableRecordIsDeliveredWithoutTheLock() {
        var sm = machine()
        #expect(sm.start() == .read)
        #expect(sm.recordRead(usable: true) == .deliver(release: false))
    }

    @Test func theHolderReadsAgainAndRefreshesOnlyWhenNothingUsableWasWrittenMeanwhile() {
        var refreshes = machine()
        #expect(refreshes.start() == .read)
        #expect(refreshes.recordRead(usable: false) == .acquireLock)
        #expect(refreshes.lockAnswered(acquired: true, now: t0, jitter: 0) == .read)
        #expect(refreshes.recordRead(usable: false) == .refresh)

        var reuses = machine()
        _ = reuses.start()
        _ = reuses.recordRead(usable: false)
        _ = reuses.lockAnswered(acquired: true, now: t0, jitter: 0)
        #expect(reuses.recordRead(usable: true) == .deliver(release: true))
    }

    /// A waiter polls at jittered intervals, takes the record another instance wrote, and never refreshes.
    @Test func aWaiterPollsUntilTheHolderWrites() {
        var sm = machine()
        _ = sm.start()
        #expect(sm.recordRead(usable: false) == .acquireLock)
        #expect(sm.lockAnswered(acquired: false, now: t0, jitter: 0) == .sleep(until: t0 + .milliseconds(20)))
        #expect(sm.woke() == .read)
        #expect(sm.recordRead(usable: false) == .acquireLock)
        #expect(sm.lockAnswered(acquired: false, now: t0 + .milliseconds(25), jitter: 1) == .sleep(until: t0 + .milliseconds(75)))
        #expect(sm.woke() == .read)
        #expect(sm.recordRead(usable: true) == .deliver(release: false))
    }

    /// The holder died: its lease lapses, and the next waiter's attempt takes the lock and refreshes.
    @Test func aWaiterTakesOverALapsedLock() {
        var sm = machine()
        _ = sm.start()
        _ = sm.recordRead(usable: false)
        _ = sm.lockAnswered(acquired: false, now: t0, jitter: 0.5)
        _ = sm.woke()
        #expect(sm.recordRead(usable: false) == .acquireLock)
        #expect(sm.lockAnswered(acquired: true, now: t0 + .milliseconds(600), jitter: 0.5) == .read)
        #expect(sm.recordRead(usable: false) == .refresh)
    }

    /// The last pause ends at the deadline; one more read and lock attempt, then the typed failure.
    @Test func theWaitIsBoundedByTheDeadline() {
        var sm = machine(wait: .milliseconds(30))
        _ = sm.start()
        _ = sm.recordRead(usable: false)
        #expect(sm.lockAnswered(acquired: false, now: t0 + .milliseconds(20), jitter: 1) == .sleep(until: t0 + .milliseconds(30)))
        #expect(sm.woke() == .read)
        #expect(sm.recordRead(usable: false) == .acquireLock)
        #expect(sm.lockAnswered(acquired: false, now: t0 + .milliseconds(31), jitter: 0) == .fail(.waitTimedOut))
    }

    @Test(arguments: [0, 1, 2, 3]) func aRedisFailureAnywhereFollowsTheFallback(_ step: Int) {
        for fallback in [TokenStoreFallback.local, .failClosed] {
            var sm = machine(fallback)
            _ = sm.start()
            if step > 0 { _ = sm.recordRead(usable: false) }  // now locking
            if step > 1 { _ = sm.lockAnswered(acquired: step == 2, now: t0, jitter: 0) }  // holding, or sleeping
            if step > 2 { _ = sm.woke() }  // polling
            #expect(sm.redisFailed(down) == (fallback == .local ? .refreshLocally : .fail(.unavailable(down))))
        }
    }
}
