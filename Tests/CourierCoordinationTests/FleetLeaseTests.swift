@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Synchronization
import Testing

/// Slots leased ahead (`FleetLeases`): asked for only when a key's limit has room, the process has demand for it and
/// the limit is fast enough to refill them at once; used by the next requests with no call; dropped when their
/// lifetime passes or a pause comes. With a real Redis: they cut the calls, and the fleet's bound still holds.
@Suite(.serialized) struct FleetLeaseTests {
    let key = "courier:rl:{api.example.com/v1}:x"
    let fast = 1_000_000.0

    @Test func slotsAreAskedForOnlyWithRoomDemandAndAFastLimit() {
        var leases = FleetLeases()
        let t0 = Deadline.now()
        let took1 = leases.arrived(key, now: t0)
        #expect(!took1)
        // No call answered yet: nothing known about room.
        #expect(leases.extra(key, requestsPerSecond: fast) == 0)
        leases.answered(key, granted: 0, hadRoom: true, now: t0)
        // Room, and one request seen in this window.
        #expect(leases.extra(key, requestsPerSecond: fast) == 1)
        for n in 1...40 { _ = leases.arrived(key, now: t0 + .microseconds(n * 10)) }
        #expect(leases.extra(key, requestsPerSecond: fast) == FleetLeases.largest)
        // The limit caps what is asked for: a quarter of what it refills in a lifetime (20 ms).
        #expect(leases.extra(key, requestsPerSecond: 1_000) == 5)
        #expect(leases.extra(key, requestsPerSecond: 199) == 0)
        #expect(leases.extra(key, requestsPerSecond: 50) == 0)
        // A call whose members had to wait: no room, no lease next time.
        leases.answered(key, granted: 0, hadRoom: false, now: t0 + .milliseconds(1))
        #expect(leases.extra(key, requestsPerSecond: fast) == 0)
        // Another key knows nothing.
        #expect(leases.extra("other", requestsPerSecond: fast) == 0)
    }

    @Test func leasedSlotsAreTakenInTurnUntilTheyRunOutOrExpire() {
        var leases = FleetLeases()
        let t0 = Deadline.now()
        _ = leases.arrived(key, now: t0)
        leases.answered(key, granted: 3, hadRoom: true, now: t0)
        let took2 = leases.arrived(key, now: t0 + .milliseconds(1))
        #expect(took2)
        let took3 = leases.takeSlot(key, now: t0 + .milliseconds(2))
        #expect(took3)
        let took4 = leases.arrived(key, now: t0 + .milliseconds(3))
        #expect(took4)
        let took5 = leases.arrived(key, now: t0 + .milliseconds(4))
        #expect(!took5, "only three were granted")
        leases.answered(key, granted: 2, hadRoom: true, now: t0 + .milliseconds(5))
        let took6 = leases.arrived(key, now: t0 + .milliseconds(5) + FleetLeases.lifetime)
        #expect(!took6, "expired at its lifetime")
        let took7 = leases.takeSlot(key, now: t0 + .milliseconds(1))
        #expect(!took7, "an expired slot is dropped, not kept for later")
        // A pause drops what is left and stops asking.
        leases.answered(key, granted: 4, hadRoom: true, now: t0 + .milliseconds(30))
        leases.drop(key)
        let took8 = leases.arrived(key, now: t0 + .milliseconds(31))
        #expect(!took8)
        #expect(leases.extra(key, requestsPerSecond: fast) == 0)
    }

    @Test func takingAWaitersSlotDoesNotCountItAsDemandAgain() {
        var leases = FleetLeases()
        let t0 = Deadline.now()
        _ = leases.arrived(key, now: t0)
        leases.answered(key, granted: 5, hadRoom: true, now: t0)
        for _ in 0..<5 {
            let took = leases.takeSlot(key, now: t0)
            #expect(took)
        }
        #expect(leases.extra(key, requestsPerSecond: fast) == 1)
    }

    /// Sequential admissions of one key under a limit that does not bind: every one goes at once, with far fewer
    /// script calls than admissions. Under 50 a second the same loop makes one call per admission.
    @Test func aBusyKeyUnderAFastLimitLeasesAndASlowOneDoesNot() async throws {
        let (server, coordinator, redis) = try await startServerWithCoordinator()
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        func calls() async throws -> Int {
            let stats = try await redis.send(RedisCommand("INFO", "commandstats")).string ?? ""
            return stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_evalsha:") }
                .flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 0
        }
        _ = try await redis.send(RedisCommand("CONFIG", "RESETSTAT"))
        let fastLimit = RateLimit(requestsPerSecond: fast, burst: 1_000, scope: .fleet)
        for _ in 0..<300 {
            #expect(goWait(await coordinator.admit(endpointKey: "api.example.com/v1", limit: fastLimit, maxWait: nil)) == .zero)
        }
        let fastCalls = try await calls()
        #expect(fastCalls <= 300 / 4, "\(fastCalls) script calls for 300 admissions")
        // A pause drops the slots: the next admission asks Redis and waits out the pause.
        #expect((try? await coordinator.pause(endpointKey: "api.example.com/v1", limit: fastLimit, for: .milliseconds(300)).get()) != nil)
        let paused = try #require(goWait(await coordinator.admit(endpointKey: "api.example.com/v1", limit: fastLimit, maxWait: nil)))
        #expect(paused > .milliseconds(200), "\(paused)")

        _ = try await redis.send(RedisCommand("CONFIG", "RESETSTAT"))
        let slowLimit = RateLimit(requestsPerSecond: 50, burst: 100, scope: .fleet)
        for _ in 0..<60 {
            _ = goWait(await coordinator.admit(endpointKey: "api.example.com/v2", limit: slowLimit, maxWait: nil))
        }
        #expect(try await calls() == 60)
        await coordinator.shutdown()
    }

    /// 64 callers of one instance, each admitting one key 40 times in a row under a limit that does not bind:
    /// batching and leased slots together make far fewer calls than admissions.
    @Test func sixtyFourCallersUnderAFastLimitShareFewCalls() async throws {
        let (server, coordinator, redis) = try await startServerWithCoordinator()
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        _ = try await redis.send(RedisCommand("CONFIG", "RESETSTAT"))
        let limit = RateLimit(requestsPerSecond: fast, burst: 1_000_000, scope: .fleet)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    for _ in 0..<40 { _ = goWait(await coordinator.admit(endpointKey: "api.example.com/v1", limit: limit, maxWait: nil)) }
                }
            }
        }
        let stats = try await redis.send(RedisCommand("INFO", "commandstats")).string ?? ""
        let calls = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_evalsha:") }
            .flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 0
        print("fleet leases: 64 callers x 40 admissions made \(calls) script calls")
        #expect(calls <= 2_560 / 8, "\(calls) script calls for 2,560 admissions")
        await coordinator.shutdown()
    }

    /// Four instances, each loading one key as fast as it can one request at a time, under 2,000 a second with a
    /// burst of 20 (fast enough to lease): in 1.5 s they send at most rate × (1.5 s + the lease lifetime) + burst
    /// (plus 1 %), and use most of it.
    @Test func theFleetBoundHoldsWithLeases() async throws {
        let server = try await RedisServer.start()
        let limit = RateLimit(requestsPerSecond: 2_000, burst: 20, scope: .fleet)
        var fleet: [FleetCoordinator] = []
        for _ in 0..<4 {
            let coordinator = try makeCoordinator(server.url())
            try await coordinator.start()
            fleet.append(coordinator)
        }
        let start = Deadline.now()
        let end = start + .milliseconds(1_500)
        let sent = await withTaskGroup(of: Int.self) { group in
            for coordinator in fleet {
                group.addTask {
                    var sent = 0
                    while Deadline.now() < end {
                        guard case .go(let wait) = await coordinator.admit(endpointKey: "partner.example.com/v1", limit: limit, maxWait: nil) else {
                            return sent
                        }
                        if Deadline.now() + wait >= end { return sent }
                        if wait > .zero { try? await Task.sleep(for: wait) }
                        sent += 1
                    }
                    return sent
                }
            }
            return await group.reduce(0, +)
        }
        for coordinator in fleet { await coordinator.shutdown() }
        withExtendedLifetime(server) {}
        let bound = limit.requestsPerSecond * (1.5 + Double(FleetLeases.lifetime / .milliseconds(1)) / 1000) + Double(limit.burst)
        #expect(Double(sent) <= bound * 1.01, "\(sent) sent, bound \(bound)")
        #expect(Double(sent) >= bound * 0.75, "\(sent) sent, bound \(bound)")
        print("fleet leases: 4 sequential instances sent \(sent) in 1.5 s under 2,000/s burst 20 (bound \(Int(bound)))")
    }
}
