import CourierCore
import CourierRedis
import Testing

private func at(_ milliseconds: UInt64) -> Deadline { Deadline(nanoseconds: 1_000_000_000 + milliseconds * 1_000_000) }

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// One connection's pipeline, driven without a socket: sends, writer turns, replies, timers and cancellations.
@Suite struct RedisPipelineStateMachineTests {
    @Test func repliesGoToCommandsInTheOrderSent() {
        var machine = RedisPipelineStateMachine(backend: "b")
        #expect(machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0)) == .queued(startWriter: true, armTimer: at(50)))
        #expect(machine.send(2, bytes: bytes("B"), deadline: at(60), now: at(0)) == .queued(startWriter: false, armTimer: nil))
        #expect(machine.send(3, bytes: bytes("C"), deadline: at(40), now: at(1)) == .queued(startWriter: false, armTimer: at(40)))
        #expect(machine.takeOutbox() == bytes("ABC"), "one write for the burst")
        #expect(machine.takeOutbox() == nil, "the writer stops")
        #expect(machine.send(4, bytes: bytes("D"), deadline: at(70), now: at(2)) == .queued(startWriter: true, armTimer: nil))
        #expect(machine.replyReceived(.integer(1)) == .deliver(1, .integer(1)))
        #expect(machine.replyReceived(.integer(2)) == .deliver(2, .integer(2)))
        #expect(machine.replyReceived(.integer(3)) == .deliver(3, .integer(3)))
        #expect(machine.inFlight == 1)
    }

    @Test func aReplyNobodyAskedForClosesTheConnection() {
        var machine = RedisPipelineStateMachine(backend: "b")
        guard case .close(let reason, let failures) = machine.replyReceived(.simpleString("OK")) else {
            Issue.record("an unexpected reply closes")
            return
        }
        #expect(failures.isEmpty)
        #expect(reason.kind == .protocolViolation, "the client hears why, even with nobody waiting")
        #expect(machine.isClosed)
        guard case .fail(let error) = machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0)) else {
            Issue.record("a closed pipeline refuses")
            return
        }
        #expect(error.kind == .protocolViolation)
    }

    @Test func aCancelledCallersReplyIsDroppedAndTheStreamStaysInStep() {
        var machine = RedisPipelineStateMachine(backend: "b")
        _ = machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0))
        _ = machine.send(2, bytes: bytes("B"), deadline: at(50), now: at(0))
        let first = machine.abandon(1)
        let again = machine.abandon(1)
        #expect(first)
        #expect(!again, "once")
        #expect(machine.replyReceived(.integer(1)) == .drop)
        #expect(machine.replyReceived(.integer(2)) == .deliver(2, .integer(2)))
        #expect(!machine.isClosed)
        let late = machine.abandon(2)
        #expect(!late, "delivered already")
    }

    @Test func aPassedDeadlineFailsEveryCallerAndClosesTheConnection() {
        var machine = RedisPipelineStateMachine(backend: "b")
        _ = machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0))
        _ = machine.send(2, bytes: bytes("B"), deadline: at(20), now: at(0))
        _ = machine.send(3, bytes: bytes("C"), deadline: at(90), now: at(0))
        _ = machine.send(4, bytes: bytes("D"), deadline: at(10), now: at(0))
        let abandoned = machine.abandon(4)
        #expect(abandoned)
        guard case .close(let reason, let failures) = machine.timerFired(now: at(20)) else {
            Issue.record("a passed deadline closes")
            return
        }
        #expect(failures.map(\.ids) == [[2], [1, 3]], "the late command, then those it takes down; not the abandoned one")
        #expect(failures.allSatisfy { $0.error.kind == .timeout })
        #expect(reason.kind == .timeout, "the client hears that the server hung")
        #expect(machine.isClosed)
        #expect(machine.replyReceived(.integer(1)) == .drop)
        #expect(machine.takeOutbox() == nil)
    }

    @Test func aTimerBeforeAnyDeadlineReArmsForTheEarliest() {
        var machine = RedisPipelineStateMachine(backend: "b")
        _ = machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0))
        _ = machine.send(2, bytes: bytes("B"), deadline: at(30), now: at(0))
        #expect(machine.takeOutbox() == bytes("AB"))
        #expect(machine.takeOutbox() == nil)
        _ = machine.replyReceived(.integer(1))
        #expect(machine.timerFired(now: at(10)) == .arm(at(30)))
        _ = machine.replyReceived(.integer(2))
        #expect(machine.timerFired(now: at(30)) == .none, "nothing waits")
        #expect(machine.send(3, bytes: bytes("C"), deadline: at(80), now: at(31)) == .queued(startWriter: true, armTimer: at(80)))
    }

    @Test func aDeadlineAlreadyPassedIsNotSent() {
        var machine = RedisPipelineStateMachine(backend: "b")
        guard case .fail(let error) = machine.send(1, bytes: bytes("A"), deadline: at(5), now: at(5)) else {
            Issue.record("not sent")
            return
        }
        #expect(error.kind == .timeout)
        #expect(machine.inFlight == 0)
    }

    @Test func closingFailsTheLiveCallersOnce() {
        var machine = RedisPipelineStateMachine(backend: "b")
        _ = machine.send(1, bytes: bytes("A"), deadline: at(50), now: at(0))
        _ = machine.send(2, bytes: bytes("B"), deadline: at(50), now: at(0))
        _ = machine.abandon(2)
        let lost = RedisError(.unavailable, "the server closed the connection", backend: "b")
        #expect(machine.close(lost) == [RedisPipelineStateMachine.Failure(ids: [1], error: lost)])
        #expect(machine.close(lost) == [])
        #expect(machine.timerFired(now: at(60)) == .none)
    }
}
