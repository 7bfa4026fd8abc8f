import CourierCore
import Testing

/// The graceful shutdown's order, as a protocol trace: running, draining, closing, closed.
@Suite struct ShutdownStateMachineTests {
    @Test func drainingThenClosingWhenTheLastRequestEnds() {
        var machine = ShutdownStateMachine()
        #expect(machine.acceptsRequests)
        #expect(machine.shutdownRequested() == .startDraining)
        #expect(!machine.acceptsRequests)
        #expect(machine.drained() == .close(cancelInFlight: false))
        // The timer firing late changes nothing.
        #expect(machine.gracePeriodEnded() == .none)
        #expect(!machine.isClosed)
        #expect(machine.closeFinished() == true)
        #expect(machine.isClosed)
    }

    @Test func theGracePeriodEndingFirstCancelsWhatIsInFlight() {
        var machine = ShutdownStateMachine()
        #expect(machine.shutdownRequested() == .startDraining)
        #expect(machine.gracePeriodEnded() == .close(cancelInFlight: true))
        // The cancelled requests ending afterwards change nothing.
        #expect(machine.drained() == .none)
        #expect(machine.closeFinished() == true)
    }

    @Test func laterCallsWaitWhileClosingAndReturnOnceClosed() {
        var machine = ShutdownStateMachine()
        #expect(machine.shutdownRequested() == .startDraining)
        #expect(machine.shutdownRequested() == .waitUntilClosed)
        #expect(machine.drained() == .close(cancelInFlight: false))
        #expect(machine.shutdownRequested() == .waitUntilClosed)
        #expect(machine.closeFinished() == true)
        #expect(machine.shutdownRequested() == .returnNow)
        #expect(machine.closeFinished() == false)
    }

    @Test func drainReportsBeforeShutdownAreIgnored() {
        var machine = ShutdownStateMachine()
        #expect(machine.drained() == .none)
        #expect(machine.gracePeriodEnded() == .none)
        #expect(machine.closeFinished() == false)
        #expect(machine.acceptsRequests)
    }
}
