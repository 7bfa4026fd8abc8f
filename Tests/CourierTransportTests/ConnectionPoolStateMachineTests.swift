import CourierTransport
import CourierTestSupport
import Testing

@Suite(.onThreadsOfTheirOwn) struct ConnectionPoolStateMachineTests {
    typealias SM = ConnectionPoolStateMachine

    @Test func firstRequestCreatesThenLeasesThenParksForReuse() {
        var pool = SM(configuration: .init(maxConnections: 2))
        // Nothing idle: a connection is started for the request, which waits for it.
        let a = pool.requestConnection(1)
        #expect(a.request == .none)
        #expect(a.connection == .create(1))
        // It connects and goes to the waiting request.
        do { let r = pool.connectionEstablished(1); #expect(r.request == .lease(1, to: 1)) }
        // Released reusable with nobody waiting: parked with an idle timer.
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.connection == .park(1, generation: 1)) }
        // The next request reuses it at once; no new connection.
        let b = pool.requestConnection(2)
        #expect(b.request == .lease(1, to: 2))
        #expect(b.connection == .none)
        #expect(pool.connectionCount == 1)
    }

    @Test func limitIsRespectedAndWaitersAreServedInOrder() {
        var pool = SM(configuration: .init(maxConnections: 2))
        do { let r = pool.requestConnection(1); #expect(r.connection == .create(1)) }
        do { let r = pool.requestConnection(2); #expect(r.connection == .create(2)) }
        // Third and fourth requests: at the limit, they queue.
        do { let r = pool.requestConnection(3); #expect(r.connection == .none) }
        do { let r = pool.requestConnection(4); #expect(r.connection == .none) }
        #expect(pool.connectionCount == 2)
        // Connection 2 comes up first: it goes to the oldest waiter, request 1.
        do { let r = pool.connectionEstablished(2); #expect(r.request == .lease(2, to: 1)) }
        do { let r = pool.connectionEstablished(1); #expect(r.request == .lease(1, to: 2)) }
        // Releases go to 3, then 4, in arrival order.
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.request == .lease(1, to: 3)) }
        do { let r = pool.connectionReleased(2, reusable: true); #expect(r.request == .lease(2, to: 4)) }
        #expect(pool.waitingCount == 0)
    }

    @Test func brokenConnectionIsReplacedForAWaiter() {
        var pool = SM(configuration: .init(maxConnections: 1))
        _ = pool.requestConnection(1)
        _ = pool.connectionEstablished(1)
        _ = pool.requestConnection(2)  // waits: the only connection is leased
        // The response said "Connection: close": close it and start another for request 2.
        let a = pool.connectionReleased(1, reusable: false)
        #expect(a.connection == .closeAndCreate(close: 1, create: 2))
        do { let r = pool.connectionEstablished(2); #expect(r.request == .lease(2, to: 2)) }
    }

    @Test func connectFailureFailsOneWaiterAndRetriesForTheRest() {
        var pool = SM(configuration: .init(maxConnections: 1))
        _ = pool.requestConnection(1)
        _ = pool.requestConnection(2)
        let a = pool.connectionFailed(1)
        #expect(a.request == .failWithConnectError(1))
        #expect(a.connection == .create(2))
        let b = pool.connectionFailed(2)
        #expect(b.request == .failWithConnectError(2))
        #expect(b.connection == .none)
        #expect(pool.isEmpty)
    }

    @Test func staleIdleTimerDoesNotCloseAReusedConnection() {
        var pool = SM(configuration: .init(maxConnections: 1))
        _ = pool.requestConnection(1)
        _ = pool.connectionEstablished(1)
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.connection == .park(1, generation: 1)) }
        _ = pool.requestConnection(2)
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.connection == .park(1, generation: 2)) }
        // The timer from the first idle period fires late: ignored.
        do { let r = pool.idleTimeout(1, generation: 1); #expect(r.connection == .none) }
        #expect(pool.idleCount == 1)
        do { let r = pool.idleTimeout(1, generation: 2); #expect(r.connection == .close(1)) }
        #expect(pool.isEmpty)
    }

    @Test func staleLeaseIsRetriedAheadOfOthers() {
        var pool = SM(configuration: .init(maxConnections: 1))
        _ = pool.requestConnection(1)
        _ = pool.connectionEstablished(1)
        _ = pool.connectionReleased(1, reusable: true)
        _ = pool.requestConnection(2)  // leased the idle connection 1
        _ = pool.requestConnection(3)  // waits
        // The server had closed connection 1 while it was idle: request 2 goes first on the replacement.
        do { let r = pool.leasedConnectionWasStale(1, request: 2); #expect(r.connection == .closeAndCreate(close: 1, create: 2)) }
        do { let r = pool.connectionEstablished(2); #expect(r.request == .lease(2, to: 2)) }
    }

    @Test func cancellingAWaiterRemovesItFromTheQueue() {
        var pool = SM(configuration: .init(maxConnections: 1))
        _ = pool.requestConnection(1)
        _ = pool.requestConnection(2)
        _ = pool.requestConnection(3)
        do { let r = pool.cancelRequest(2); #expect(r.request == .cancelled(2)) }
        do { let r = pool.cancelRequest(2); #expect(r.request == .none) }
        do { let r = pool.connectionEstablished(1); #expect(r.request == .lease(1, to: 1)) }
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.request == .lease(1, to: 3)) }
    }

    @Test func shutdownClosesIdleAndFailsWaiters() {
        var pool = SM(configuration: .init(maxConnections: 2))
        _ = pool.requestConnection(1)
        _ = pool.connectionEstablished(1)
        _ = pool.connectionReleased(1, reusable: true)
        _ = pool.requestConnection(2)
        _ = pool.requestConnection(3)  // creates connection 2, waits
        let (close, fail) = pool.shutdown()
        #expect(close.isEmpty)  // connection 1 is leased to request 2
        #expect(fail == [3])
        do { let r = pool.connectionEstablished(2); #expect(r.connection == .close(2)) }
        do { let r = pool.connectionReleased(1, reusable: true); #expect(r.connection == .close(1)) }
    }

    @Test func randomEventSequencesKeepTheInvariants() {
        // A model check over random legal event sequences: never more than the limit, every request is
        // answered exactly once, waiters and idle connections never coexist.
        var rng = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let limit = Int.random(in: 1...4, using: &rng)
            var pool = SM(configuration: .init(maxConnections: limit))
            var connecting: [SM.ConnectionID] = []
            var leased: [SM.ConnectionID: SM.RequestID] = [:]
            var answered: Set<SM.RequestID> = []
            var nextRequest: SM.RequestID = 1
            var waiting: Set<SM.RequestID> = []
            func apply(_ a: SM.Action) {
                switch a.request {
                case .lease(let c, let r):
                    #expect(!answered.contains(r)); answered.insert(r); waiting.remove(r); leased[c] = r
                case .failWithConnectError(let r), .cancelled(let r):
                    #expect(!answered.contains(r)); answered.insert(r); waiting.remove(r)
                case .none: break
                }
                switch a.connection {
                case .create(let c): connecting.append(c)
                case .closeAndCreate(_, let c): connecting.append(c)
                default: break
                }
            }
            for _ in 0..<200 {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0, 1:
                    waiting.insert(nextRequest)
                    apply(pool.requestConnection(nextRequest)); nextRequest += 1
                case 2 where !connecting.isEmpty:
                    let c = connecting.remove(at: Int.random(in: 0..<connecting.count, using: &rng))
                    apply(Bool.random(using: &rng) ? pool.connectionEstablished(c) : pool.connectionFailed(c))
                case 3 where !leased.isEmpty:
                    let c = leased.keys.randomElement(using: &rng)!
                    leased[c] = nil
                    apply(pool.connectionReleased(c, reusable: Bool.random(using: &rng)))
                case 4 where !waiting.isEmpty:
                    apply(pool.cancelRequest(waiting.randomElement(using: &rng)!))
                default: break
                }
                #expect(pool.connectionCount <= limit)
                #expect(pool.idleCount == 0 || pool.waitingCount == 0)
            }
        }
    }
}

