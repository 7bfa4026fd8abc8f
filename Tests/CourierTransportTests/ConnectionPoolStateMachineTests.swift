import CourierCore
import CourierPosix
import CourierTestSupport
import Testing

@testable import CourierTransport

/// The pool's state machine driven directly: each test is a protocol trace, events with an explicit `now` in and
/// the actions out, rendered one line each by ``trace(_:)`` (`c1` is connection 1, `r1` request 1, `@10` the
/// instant 10 s).
@Suite(.onThreadsOfTheirOwn) struct ConnectionPoolStateMachineTests {
    typealias SM = ConnectionPoolStateMachine

    let a = key("a")
    let b = key("b")

    /// The instant `seconds` s.
    func t(_ seconds: UInt64) -> Deadline { Deadline(nanoseconds: seconds * 1_000_000_000) }

    func machine(limit: Int = 2) -> SM {
        SM(configuration: .init(maxConnectionsPerKey: limit, idleTimeout: .seconds(60)))
    }

    /// A machine whose key `a` has connection 1 idle since 2 s, after request 1 used it.
    func machineWithAnIdleConnection(limit: Int = 2) -> SM {
        var pool = machine(limit: limit)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(1))
        _ = pool.connectionReleased(1, reusable: true, now: t(2))
        return pool
    }

    @Test func firstRequestCreatesThenLeasesThenParksForReuse() {
        var pool = machine()
        // Nothing idle: the request waits, and a connection is made for it with its connect deadline.
        #expect(pool.leaseIdleConnection(key: a) == .wait)
        #expect(trace(pool.waitForConnection(1, key: a, connectDeadline: t(10))) == ["create c1 a @10"])
        // It connects and goes to the waiting request.
        #expect(trace(pool.connectionEstablished(1, now: t(1))) == ["run r1 on c1"])
        // Released reusable with nobody waiting: parked, with an idle timer for the whole idle timeout.
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(2))) == ["idle timer c1 @62"])
        #expect(pool.idleCount == 1 && pool.openCount == 1)
        // The next request leases it at once, without waiting.
        #expect(pool.leaseIdleConnection(key: a) == .leased(1))
        #expect(pool.idleCount == 0 && pool.openCount == 1 && pool.connectionCount == 1)
    }

    @Test func connectFailureDeliversTheRealErrorToTheOldestWaiter() {
        var pool = machine(limit: 1)
        #expect(trace(pool.waitForConnection(1, key: a, connectDeadline: t(10))) == ["create c1 a @10"])
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(11))) == [])
        // The resolver's own error reaches request 1; another connection is made for request 2, with its deadline.
        #expect(trace(pool.connectionFailed(1, error: Refusal("no such host"))) == [
            "fail r1: connect(no such host)", "create c2 a @11",
        ])
        #expect(trace(pool.connectionFailed(2, error: Refusal("connection refused"))) == ["fail r2: connect(connection refused)"])
        #expect(pool.connectionCount == 0 && pool.waitingCount == 0)
    }

    @Test func aConnectionIsMadeWithTheDeadlineOfTheWaiterItIsFor() {
        var pool = machine(limit: 2)
        #expect(trace(pool.waitForConnection(1, key: a, connectDeadline: t(10))) == ["create c1 a @10"])
        // Request 2 is not answered for by connection 1 (which goes to request 1): the second one is made for it.
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(12))) == ["create c2 a @12"])
        #expect(trace(pool.waitForConnection(3, key: a, connectDeadline: t(13))) == [])
    }

    @Test func aWaitersDeadlinePassesWhileItWaitsInLine() {
        var pool = machine(limit: 1)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(1))
        // Request 2 waits behind request 1; its connect deadline (10) passes while it waits: waiting in line is
        // not connecting, so it keeps its place.
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(10))) == [])
        #expect(trace(pool.waitForConnection(3, key: a, connectDeadline: t(40))) == [])
        // At 30 connection 1 comes back unusable: its replacement is made for request 2, with request 2's passed
        // deadline, so the connector fails at once with its own timeout, which request 2 gets.
        #expect(trace(pool.connectionReleased(1, reusable: false, now: t(30))) == ["close c1, create c2 a @10"])
        #expect(trace(pool.connectionFailed(2, error: Refusal("connect timeout"))) == [
            "fail r2: connect(connect timeout)", "create c3 a @40",
        ])
        #expect(trace(pool.connectionEstablished(3, now: t(31))) == ["run r3 on c3"])
    }

    @Test func idleConnectionsCloseAfterTheIdleTimeoutCountedFromTheirLastUse() {
        var pool = machine()
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        #expect(trace(pool.connectionEstablished(1, now: t(0))) == ["run r1 on c1"])
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(0))) == ["idle timer c1 @60"])
        // Reused at 50 and parked again at 55: the timer armed at 0 stays, no new one.
        #expect(pool.leaseIdleConnection(key: a) == .leased(1))
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(55))) == [])
        // It fires at 60: idle for 5 s only, so it asks to be armed again for the rest of the period.
        #expect(trace(pool.idleTimerFired(1, now: t(60))) == ["idle timer c1 @115"])
        #expect(trace(pool.idleTimerFired(1, now: t(115))) == ["close idle-timed-out c1"])
        #expect(pool.connectionCount == 0 && pool.openCount == 0 && pool.idleCount == 0)
        // A late timer for a closed connection does nothing.
        #expect(trace(pool.idleTimerFired(1, now: t(200))) == [])
    }

    @Test func aTimerFiringWhileTheConnectionIsLeasedLeavesTheNextParkToArmOne() {
        var pool = machine()
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(0))
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(0))) == ["idle timer c1 @60"])
        #expect(pool.leaseIdleConnection(key: a) == .leased(1))
        #expect(trace(pool.idleTimerFired(1, now: t(60))) == [])
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(70))) == ["idle timer c1 @130"])
    }

    @Test func thePerKeyLimitHoldsAndEachKeyServesItsWaitersInOrder() {
        var pool = machine(limit: 2)
        #expect(trace(pool.waitForConnection(1, key: a, connectDeadline: t(10))) == ["create c1 a @10"])
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(10))) == ["create c2 a @10"])
        // Key a is at its limit: requests 3 and 5 queue, while key b's request 4 gets a connection of its own.
        #expect(trace(pool.waitForConnection(3, key: a, connectDeadline: t(10))) == [])
        #expect(trace(pool.waitForConnection(4, key: b, connectDeadline: t(10))) == ["create c3 b @10"])
        #expect(trace(pool.waitForConnection(5, key: a, connectDeadline: t(10))) == [])
        // Connection 2 comes up first: it goes to the oldest waiter of its key, request 1.
        #expect(trace(pool.connectionEstablished(2, now: t(1))) == ["run r1 on c2"])
        #expect(trace(pool.connectionEstablished(3, now: t(1))) == ["run r4 on c3"])
        #expect(trace(pool.connectionEstablished(1, now: t(1))) == ["run r2 on c1"])
        // Key b's free connection never serves key a's waiters; key a's go to 3, then 5, in arrival order.
        #expect(trace(pool.connectionReleased(3, reusable: true, now: t(2))) == ["idle timer c3 @62"])
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(2))) == ["run r3 on c1"])
        #expect(trace(pool.connectionReleased(2, reusable: true, now: t(2))) == ["run r5 on c2"])
        #expect(pool.waitingCount == 0 && pool.connectionCount == 3)
    }

    @Test func aBrokenConnectionIsReplacedForAWaiter() {
        var pool = machine(limit: 1)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(1))
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(12))) == [])
        // The response said "Connection: close": close it and start another for request 2.
        #expect(trace(pool.connectionReleased(1, reusable: false, now: t(2))) == ["close c1, create c2 a @12"])
        #expect(trace(pool.connectionEstablished(2, now: t(3))) == ["run r2 on c2"])
        #expect(pool.openCount == 1)
    }

    @Test func aStaleLeaseIsServedAgainAheadOfOthers() {
        var pool = machineWithAnIdleConnection(limit: 1)
        #expect(pool.leaseIdleConnection(key: a) == .leased(1))
        #expect(trace(pool.waitForConnection(3, key: a, connectDeadline: t(13))) == [])
        // The server had closed connection 1 while it was idle: request 2 goes first on the replacement, which is
        // made with request 2's deadline.
        #expect(trace(pool.leasedConnectionWasStale(1, request: 2, connectDeadline: t(12))) == ["close c1, create c2 a @12"])
        #expect(trace(pool.connectionEstablished(2, now: t(3))) == ["run r2 on c2"])
        #expect(trace(pool.connectionReleased(2, reusable: true, now: t(4))) == ["run r3 on c2"])
    }

    @Test func aStaleLeaseTakesAnotherIdleConnectionAtOnce() {
        var pool = machine(limit: 2)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.waitForConnection(2, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(1))
        _ = pool.connectionEstablished(2, now: t(1))
        _ = pool.connectionReleased(1, reusable: true, now: t(2))
        _ = pool.connectionReleased(2, reusable: true, now: t(3))
        #expect(pool.leaseIdleConnection(key: a) == .leased(2))
        #expect(trace(pool.leasedConnectionWasStale(2, request: 3, connectDeadline: t(13))) == ["run r3 on c1", "close c2"])
        #expect(pool.idleCount == 0 && pool.openCount == 1)
    }

    @Test func cancellingAWaiterRemovesItFromTheQueue() {
        var pool = machine(limit: 1)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.waitForConnection(2, key: a, connectDeadline: t(10))
        _ = pool.waitForConnection(3, key: a, connectDeadline: t(10))
        #expect(trace(pool.cancelWaiter(2, key: a)) == ["fail r2: cancelled"])
        #expect(trace(pool.cancelWaiter(2, key: a)) == [])
        #expect(trace(pool.connectionEstablished(1, now: t(1))) == ["run r1 on c1"])
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(2))) == ["run r3 on c1"])
    }

    @Test func closingAKeysIdleConnectionsLeavesOtherKeysAlone() {
        var pool = machine(limit: 2)
        for (request, key) in [(1, a), (2, a), (3, b)] as [(SM.RequestID, PoolKey)] {
            _ = pool.waitForConnection(request, key: key, connectDeadline: t(10))
        }
        for connection in 1...3 as ClosedRange<SM.ConnectionID> {
            #expect(trace(pool.connectionEstablished(connection, now: t(1))) == ["run r\(connection) on c\(connection)"])
        }
        for connection in 1...3 as ClosedRange<SM.ConnectionID> {
            #expect(trace(pool.connectionReleased(connection, reusable: true, now: t(2))) == ["idle timer c\(connection) @62"])
        }
        #expect(trace(pool.closeIdleConnections(key: a)) == ["close c1 c2"])
        #expect(trace(pool.closeIdleConnections(key: a)) == [])
        #expect(pool.leaseIdleConnection(key: b) == .leased(3))
    }

    @Test func shutdownWhileConnectingFailsTheWaitersAndClosesTheConnectionWhenItArrives() {
        var pool = machineWithAnIdleConnection(limit: 2)
        #expect(pool.leaseIdleConnection(key: a) == .leased(1))
        #expect(trace(pool.waitForConnection(2, key: a, connectDeadline: t(10))) == ["create c2 a @10"])
        #expect(trace(pool.waitForConnection(3, key: a, connectDeadline: t(10))) == [])
        // A graceful shutdown waits for the pool to be quiet.
        #expect(trace(pool.notifyWhenQuiet()) == [])
        #expect(trace(pool.shutdown()) == ["fail r2 r3: shutDown"])
        // Connection 2 arrives after the shutdown: closed, never parked.
        #expect(trace(pool.connectionEstablished(2, now: t(3))) == ["close c2"])
        // New requests are refused; the leased connection closes as it comes back, and then the pool is quiet.
        #expect(pool.leaseIdleConnection(key: a) == .refused)
        #expect(trace(pool.waitForConnection(4, key: a, connectDeadline: t(10))) == ["fail r4: refused"])
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(4))) == ["close c1", "quiet"])
        #expect(pool.connectionCount == 0 && pool.openCount == 0)
    }

    @Test func closeAllClosesLeasedConnectionsAndForgetsTheirRelease() {
        var pool = machine(limit: 2)
        _ = pool.waitForConnection(1, key: a, connectDeadline: t(10))
        _ = pool.waitForConnection(2, key: a, connectDeadline: t(10))
        _ = pool.connectionEstablished(1, now: t(1))
        #expect(trace(pool.notifyWhenQuiet()) == [])
        // Request 2 waited for connection 2, still connecting: it fails; request 1's connection is closed under it.
        #expect(trace(pool.closeAll()) == ["fail r2: shutDown", "close c1", "quiet"])
        #expect(pool.openCount == 0)
        #expect(trace(pool.connectionReleased(1, reusable: true, now: t(2))) == [])
        #expect(trace(pool.connectionEstablished(2, now: t(2))) == ["close c2"])
        #expect(pool.connectionCount == 0)
    }

    @Test func aQuietPoolSaysSoAtOnce() {
        var pool = machineWithAnIdleConnection()
        // Idle connections do not count.
        #expect(trace(pool.notifyWhenQuiet()) == ["quiet"])
    }

    @Test func randomEventSequencesKeepTheInvariants() {
        // A model check over random legal event sequences: never more than the limit per key, every request is
        // answered exactly once, a key's waiters and idle connections never coexist, and the counts add up.
        var rng = SplitMix64(seed: 42)
        let keys = [a, b]
        for _ in 0..<300 {
            let limit = Int.random(in: 1...4, using: &rng)
            var pool = machine(limit: limit)
            var connecting: [SM.ConnectionID] = []
            var leased: Set<SM.ConnectionID> = []
            var idle: Set<SM.ConnectionID> = []
            var answered: Set<SM.RequestID> = []
            var waiting: [SM.RequestID: PoolKey] = [:]
            var nextRequest: SM.RequestID = 1
            var now = t(0)
            func answer(_ request: SM.RequestID) {
                #expect(!answered.contains(request))
                answered.insert(request)
                waiting[request] = nil
            }
            func apply(_ action: SM.Action) {
                switch action.request {
                case .runRequest(let r, let c): answer(r); leased.insert(c); idle.remove(c)
                case .failRequest(let r, _): answer(r)
                case .failRequests(let rs, _): rs.forEach(answer)
                case .none: break
                }
                switch action.connection {
                case .createConnection(let c, _, _): connecting.append(c)
                case .closeConnectionAndCreate(let old, let c, _, _): connecting.append(c); idle.remove(old)
                case .closeConnection(let c), .closeIdleTimedOut(let c): idle.remove(c)
                case .closeConnections(let cs): cs.forEach { idle.remove($0) }
                case .scheduleIdleTimeout, .none: break
                }
            }
            for _ in 0..<200 {
                now = now + .seconds(Int.random(in: 0...30, using: &rng))
                switch Int.random(in: 0..<7, using: &rng) {
                case 0, 1:
                    let key = keys.randomElement(using: &rng)!
                    let request = nextRequest
                    nextRequest += 1
                    if case .leased(let c) = pool.leaseIdleConnection(key: key) {
                        answered.insert(request); leased.insert(c); idle.remove(c)
                    } else {
                        waiting[request] = key
                        apply(pool.waitForConnection(request, key: key, connectDeadline: now + .seconds(10)))
                    }
                case 2 where !connecting.isEmpty:
                    let c = connecting.remove(at: Int.random(in: 0..<connecting.count, using: &rng))
                    let action = Bool.random(using: &rng)
                        ? pool.connectionEstablished(c, now: now) : pool.connectionFailed(c, error: Refusal("refused"))
                    if case .none = action.request, case .scheduleIdleTimeout = action.connection { idle.insert(c) }
                    apply(action)
                case 3 where !leased.isEmpty:
                    let c = leased.randomElement(using: &rng)!
                    leased.remove(c)
                    let action = pool.connectionReleased(c, reusable: Bool.random(using: &rng), now: now)
                    if case .none = action.request, action.connection.isParkOrNone { idle.insert(c) }
                    apply(action)
                case 4 where !waiting.isEmpty:
                    let (request, key) = waiting.randomElement(using: &rng)!
                    apply(pool.cancelWaiter(request, key: key))
                case 5 where !idle.isEmpty:
                    apply(pool.idleTimerFired(idle.randomElement(using: &rng)!, now: now))
                default: break
                }
                for key in keys {
                    guard let state = pool.state(of: key) else { continue }
                    #expect(state.connectionCount <= limit)
                    #expect(state.idle.isEmpty || state.waiters.isEmpty)
                    #expect(!state.isEmpty)
                }
                #expect(pool.openCount == leased.count + idle.count)
                #expect(pool.idleCount == idle.count)
                #expect(pool.connectionCount == connecting.count + leased.count + idle.count)
                #expect(pool.waitingCount == waiting.count)
            }
        }
    }
}

extension ConnectionPoolStateMachine.ConnectionAction {
    /// Whether a released connection was parked (with or without a new timer).
    fileprivate var isParkOrNone: Bool {
        switch self {
        case .none, .scheduleIdleTimeout: true
        default: false
        }
    }
}

/// A pool key for the host `name`.
private func key(_ name: String) -> PoolKey {
    PoolKey(scheme: "http", host: name, port: 80, connectHost: name, connectPort: 80)
}

/// A connect error with a readable name.
private struct Refusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// An action as the lines of a trace.
private func trace(_ action: ConnectionPoolStateMachine.Action) -> [String] {
    var lines: [String] = []
    switch action.request {
    case .none: break
    case .runRequest(let r, let c): lines.append("run r\(r) on c\(c)")
    case .failRequest(let r, let failure): lines.append("fail r\(r): \(describe(failure))")
    case .failRequests(let rs, let failure): lines.append("fail \(rs.map { "r\($0)" }.joined(separator: " ")): \(describe(failure))")
    }
    func created(_ c: UInt64, _ key: PoolKey, _ deadline: Deadline) -> String {
        "create c\(c) \(key.host) @\(deadline.nanoseconds / 1_000_000_000)"
    }
    switch action.connection {
    case .none: break
    case .createConnection(let c, let key, let deadline): lines.append(created(c, key, deadline))
    case .scheduleIdleTimeout(let c, let at): lines.append("idle timer c\(c) @\(at.nanoseconds / 1_000_000_000)")
    case .closeConnection(let c): lines.append("close c\(c)")
    case .closeIdleTimedOut(let c): lines.append("close idle-timed-out c\(c)")
    case .closeConnectionAndCreate(let old, let c, let key, let deadline): lines.append("close c\(old), \(created(c, key, deadline))")
    case .closeConnections(let cs): lines.append("close \(cs.sorted().map { "c\($0)" }.joined(separator: " "))")
    }
    if action.notifiesQuiet { lines.append("quiet") }
    return lines
}

private func describe(_ failure: ConnectionPoolStateMachine.Failure) -> String {
    switch failure {
    case .connect(let error): "connect(\(error))"
    case .cancelled: "cancelled"
    case .shutDown: "shutDown"
    case .refused: "refused"
    }
}
