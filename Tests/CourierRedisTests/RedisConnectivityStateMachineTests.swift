import CourierCore
import CourierRedis
import Testing

private func at(_ milliseconds: UInt64) -> Deadline { Deadline(nanoseconds: 1_000_000_000 + milliseconds * 1_000_000) }

private let refused = RedisError(.unavailable, "connecting: connection refused", backend: "127.0.0.1:6379")
private let hung = RedisError(.timeout, "no reply within the command's deadline", backend: "127.0.0.1:6379")
private let lost = RedisError(.unavailable, "the server closed the connection", backend: "127.0.0.1:6379")

/// The reconnection and circuit-breaker machine, driven as a trace of events with the time carried in.
@Suite struct RedisConnectivityStateMachineTests {
    private func connected() -> RedisConnectivityStateMachine {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        #expect(machine.request(now: at(0)) == .connectAndWait(generation: 1))
        #expect(machine.connectSucceeded(generation: 1, now: at(1)) == .resumeWaiters(generation: 1))
        return machine
    }

    @Test func theFirstCallConnectsAndOthersWaitForIt() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        #expect(machine.state == .idle)
        #expect(machine.request(now: at(0)) == .connectAndWait(generation: 1))
        #expect(machine.request(now: at(0)) == .wait)
        #expect(machine.connectSucceeded(generation: 1, now: at(2)) == .resumeWaiters(generation: 1))
        #expect(machine.request(now: at(3)) == .send(generation: 1))
    }

    @Test func backOffDoublesUpToItsCapWithJitterBetweenHalfAndAll() {
        func delay(_ failures: Int, jitter: Double) -> Duration {
            let exact = RedisConnectivityStateMachine.delay(RedisConnectivityStateMachine.reconnectBackoff, afterFailures: failures, jitter: jitter)
            return .microseconds((exact / .microseconds(1)).rounded())  // the curve is computed in floating point
        }
        #expect(delay(1, jitter: 1) == .milliseconds(50))
        #expect(delay(2, jitter: 1) == .milliseconds(100))
        #expect(delay(5, jitter: 1) == .milliseconds(800))
        #expect(delay(6, jitter: 1) == .seconds(1))
        #expect(delay(1_000, jitter: 1) == .seconds(1))
        #expect(delay(6, jitter: 0) == .milliseconds(500))
        #expect(delay(6, jitter: 7) == .seconds(1), "jitter is clamped")
    }

    @Test func aFailedConnectOpensTheBreakerAndCallsFailFastUntilTheProbe() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        _ = machine.request(now: at(0))
        #expect(machine.connectFailed(generation: 1, error: refused, now: at(1), jitter: 1) == .failWaiters(refused, retryAt: at(51)))
        #expect(machine.state == .open(retryAt: at(51)))
        guard case .failFast(let error) = machine.request(now: at(20)) else {
            Issue.record("a call while the breaker is open fails fast")
            return
        }
        #expect(error.kind == .unavailable)
        #expect(error.message.contains("connection refused"), "the last failure is named: \(error.message)")
        #expect(error.message.contains("next probe in 31 ms"))
        // The retry timer starts the probe; calls fail fast while it runs.
        #expect(machine.retryTimerFired(now: at(51)) == .connect(generation: 2))
        guard case .failFast = machine.request(now: at(52)) else {
            Issue.record("a call during a probe fails fast")
            return
        }
        #expect(machine.connectSucceeded(generation: 2, now: at(53)) == .resumeWaiters(generation: 2))
        #expect(machine.consecutiveFailures == 0)
        #expect(machine.request(now: at(54)) == .send(generation: 2))
    }

    @Test func probesBackOffExponentiallyAndCapAtOneSecond() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        _ = machine.request(now: at(0))
        var now: UInt64 = 0
        var waits: [UInt64] = []
        var generation: UInt64 = 1
        for _ in 0..<8 {
            guard case .failWaiters(_, let retryAt) = machine.connectFailed(generation: generation, error: refused, now: at(now), jitter: 1) else {
                Issue.record("a failed connect schedules a retry")
                return
            }
            let wait = (retryAt.nanoseconds - at(now).nanoseconds) / 1_000_000
            waits.append(wait)
            now += wait
            generation += 1
            #expect(machine.retryTimerFired(now: at(now)) == .connect(generation: generation))
        }
        #expect(waits == [50, 100, 200, 400, 800, 1_000, 1_000, 1_000])
        #expect(machine.consecutiveFailures == 8)
    }

    @Test func anEarlyTimerReschedulesAndALateCallStartsTheProbeItself() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        _ = machine.request(now: at(0))
        _ = machine.connectFailed(generation: 1, error: refused, now: at(0), jitter: 1)
        #expect(machine.retryTimerFired(now: at(10)) == .scheduleRetry(at: at(50)))
        guard case .probeAndFailFast(let generation, let error) = machine.request(now: at(60)) else {
            Issue.record("a call after the retry time starts the probe")
            return
        }
        #expect(generation == 2)
        #expect(error.message.contains("a probe is under way"))
        #expect(machine.retryTimerFired(now: at(61)) == .none, "the probe is already under way")
    }

    @Test func aLostConnectionReconnectsAtOnceAndCallsWaitForIt() {
        var machine = connected()
        #expect(machine.connectionFailed(generation: 1, error: lost, now: at(10)) == .connect(generation: 2))
        #expect(machine.state == .connecting(generation: 2, probe: false))
        #expect(machine.request(now: at(11)) == .wait)
        #expect(machine.consecutiveFailures == 0, "a lost connection is not yet a failure")
        #expect(machine.connectSucceeded(generation: 2, now: at(12)) == .resumeWaiters(generation: 2))
    }

    @Test func aHungServerOpensTheBreakerAtOnceWithAProbe() {
        var machine = connected()
        #expect(machine.connectionFailed(generation: 1, error: hung, now: at(70)) == .connect(generation: 2))
        #expect(machine.state == .connecting(generation: 2, probe: true))
        guard case .failFast(let error) = machine.request(now: at(71)) else {
            Issue.record("calls fail fast while a hung server is probed")
            return
        }
        #expect(error.kind == .unavailable, "no time was paid, so it is no timeout")
        // The probe hangs too, and fails by the connect timeout; then back-off.
        let probeTimeout = RedisError(.timeout, "connecting did not finish within its deadline", backend: "127.0.0.1:6379")
        #expect(machine.connectFailed(generation: 2, error: probeTimeout, now: at(1_070), jitter: 1) == .failWaiters(probeTimeout, retryAt: at(1_170)))
        #expect(machine.consecutiveFailures == 2)
    }

    @Test func eventsOfAnOldGenerationAreIgnored() {
        var machine = connected()
        _ = machine.connectionFailed(generation: 1, error: lost, now: at(10))
        #expect(machine.connectionFailed(generation: 1, error: lost, now: at(11)) == .none)
        #expect(machine.connectFailed(generation: 1, error: refused, now: at(11), jitter: 1) == .none)
        #expect(machine.connectSucceeded(generation: 1, now: at(11)) == .closeConnection)
        #expect(machine.state == .connecting(generation: 2, probe: false))
    }

    @Test func anAuthenticationFailureKeepsItsKindWhileTheBreakerIsOpen() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        _ = machine.request(now: at(0))
        let wrong = RedisError(.authentication, "WRONGPASS invalid username-password pair", backend: "127.0.0.1:6379")
        _ = machine.connectFailed(generation: 1, error: wrong, now: at(1), jitter: 1)
        guard case .failFast(let error) = machine.request(now: at(2)) else {
            Issue.record("fail fast")
            return
        }
        #expect(error.kind == .authentication)
        #expect(error.description.hasPrefix("redis 127.0.0.1:6379: authentication: "))
    }

    @Test func shutDownFailsEverythingAndClosesLateConnections() {
        var machine = RedisConnectivityStateMachine(backend: "127.0.0.1:6379")
        _ = machine.request(now: at(0))
        guard case .shutDown(let error) = machine.shutdown() else {
            Issue.record("shut down")
            return
        }
        #expect(error.kind == .shutdown)
        #expect(machine.shutdown() == .none)
        #expect(machine.connectSucceeded(generation: 1, now: at(1)) == .closeConnection)
        #expect(machine.request(now: at(2)) == .failFast(error))
    }
}
