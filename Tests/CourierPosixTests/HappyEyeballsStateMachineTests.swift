import Testing

@testable import CourierPosix
import CourierCore

/// Drives the machine with explicit times: no sockets, no sleeping.
@Suite struct HappyEyeballsStateMachineTests {
    let v6a = SocketAddress(ipAddress: "2001:db8::1", port: 443)!
    let v6b = SocketAddress(ipAddress: "2001:db8::2", port: 443)!
    let v4a = SocketAddress(ipAddress: "192.0.2.1", port: 443)!
    let v4b = SocketAddress(ipAddress: "192.0.2.2", port: 443)!
    let refused = SystemCallError(call: "connect", errno: 111)
    let unreachable = SystemCallError(call: "connect", errno: 101)

    func at(_ milliseconds: UInt64) -> Deadline {
        Deadline(nanoseconds: 1_000_000_000 + milliseconds * 1_000_000)
    }

    @Test func ordersFamiliesInterleavedWithIPv6First() {
        #expect(HappyEyeballsStateMachine.attemptOrder([v4a, v4b, v6a, v6b]) == [v6a, v4a, v6b, v4b])
        #expect(HappyEyeballsStateMachine.attemptOrder([v4a, v6a, v4b]) == [v6a, v4a, v4b])
        #expect(HappyEyeballsStateMachine.attemptOrder([v4a, v4a, v4b]) == [v4a, v4b])
        #expect(HappyEyeballsStateMachine.attemptOrder([]) == [])
    }

    @Test func emptyListFailsAtOnce() {
        var machine = HappyEyeballsStateMachine(addresses: [])
        #expect(machine.start(now: at(0)) == [.fail(.noAddresses)])
        #expect(machine.isFinished)
    }

    @Test func singleAddressConnects() {
        var machine = HappyEyeballsStateMachine(addresses: [v4a])
        // One address: no attempt-delay timer.
        #expect(machine.start(now: at(0)) == [.startAttempt(index: 0, address: v4a)])
        #expect(machine.attemptSucceeded(index: 0) == [.succeed(index: 0)])
        #expect(machine.isFinished)
    }

    @Test func nextAttemptStartsAfter250Milliseconds() {
        var machine = HappyEyeballsStateMachine(addresses: [v4a, v6a, v4b])
        #expect(machine.start(now: at(0)) == [.startAttempt(index: 0, address: v6a), .scheduleNextAttempt(at: at(250))])
        // A timer firing early (the owner's timers may be late or early by a tick) does nothing.
        #expect(machine.nextAttemptTimerFired(now: at(249)) == [])
        #expect(machine.nextAttemptTimerFired(now: at(250)) == [.startAttempt(index: 1, address: v4a), .scheduleNextAttempt(at: at(500))])
        #expect(machine.nextAttemptTimerFired(now: at(500)) == [.startAttempt(index: 2, address: v4b)])
        // Nothing left to start.
        #expect(machine.nextAttemptTimerFired(now: at(750)) == [])
        // The second attempt wins: the other two are closed, then the winner is handed over.
        #expect(machine.attemptSucceeded(index: 1) == [.cancelAttempt(index: 0), .cancelAttempt(index: 2), .succeed(index: 1)])
        // A loser that connects late is closed.
        #expect(machine.attemptSucceeded(index: 0) == [.cancelAttempt(index: 0)])
        #expect(machine.attemptFailed(index: 2, error: refused, now: at(800)) == [])
    }

    @Test func failureStartsTheNextAttemptImmediately() {
        var machine = HappyEyeballsStateMachine(addresses: [v6a, v4a, v6b])
        _ = machine.start(now: at(0))
        // Attempt 0 fails after 10 ms: attempt 1 starts now, and the delay restarts from now.
        #expect(machine.attemptFailed(index: 0, error: unreachable, now: at(10)) == [.startAttempt(index: 1, address: v4a), .scheduleNextAttempt(at: at(260))])
        // The timer armed for the old deadline (250 ms) is stale and ignored.
        #expect(machine.nextAttemptTimerFired(now: at(250)) == [])
        #expect(machine.nextAttemptTimerFired(now: at(260)) == [.startAttempt(index: 2, address: v6b)])
    }

    @Test func allFailedListsEveryAddressInAttemptOrder() {
        var machine = HappyEyeballsStateMachine(addresses: [v4a, v6a])
        _ = machine.start(now: at(0))
        _ = machine.nextAttemptTimerFired(now: at(250))
        // Attempt 1 fails first, then attempt 0: the result is still in attempt order.
        #expect(machine.attemptFailed(index: 1, error: refused, now: at(260)) == [])
        let expected: [ConnectAttemptFailure] = [
            ConnectAttemptFailure(address: v6a, error: unreachable),
            ConnectAttemptFailure(address: v4a, error: refused),
        ]
        #expect(machine.attemptFailed(index: 0, error: unreachable, now: at(300)) == [.fail(.allAttemptsFailed(expected))])
        #expect(machine.isFinished)
    }

    @Test func timeoutCancelsAttemptsInFlight() {
        var machine = HappyEyeballsStateMachine(addresses: [v6a, v4a, v6b])
        _ = machine.start(now: at(0))
        _ = machine.attemptFailed(index: 0, error: unreachable, now: at(5))
        _ = machine.nextAttemptTimerFired(now: at(255))
        #expect(machine.timedOut() == [.cancelAttempt(index: 1), .cancelAttempt(index: 2), .fail(.timedOut([ConnectAttemptFailure(address: v6a, error: unreachable)]))])
        // Late events after the end change nothing.
        #expect(machine.timedOut() == [])
        #expect(machine.cancelled() == [])
        #expect(machine.attemptFailed(index: 1, error: refused, now: at(300)) == [])
    }

    @Test func cancellationBeforeAndDuringTheRace() {
        var early = HappyEyeballsStateMachine(addresses: [v4a])
        #expect(early.cancelled() == [.fail(.cancelled)])
        #expect(early.start(now: at(0)) == [])

        var racing = HappyEyeballsStateMachine(addresses: [v4a, v4b])
        _ = racing.start(now: at(0))
        #expect(racing.cancelled() == [.cancelAttempt(index: 0), .fail(.cancelled)])
    }

    @Test func customDelay() {
        var machine = HappyEyeballsStateMachine(addresses: [v4a, v4b], attemptDelay: .milliseconds(100))
        #expect(machine.start(now: at(0)) == [.startAttempt(index: 0, address: v4a), .scheduleNextAttempt(at: at(100))])
    }
}
