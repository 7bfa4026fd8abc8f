import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Testing

/// Live instances: heartbeats in the live set, counted by every instance.
@Suite(.serialized) struct FleetInstancesTests {
    @Test func instancesCountEachOtherAndDropOutWhenShutDownOrSilent() async throws {
        let server = try await RedisServer.start()
        let redis = try inspector(server)
        defer { redis.shutdown() }
        let make = { (id: String) in try makeCoordinator(server.url(), instanceID: id, heartbeat: .milliseconds(100), lapse: .milliseconds(400)) }
        let first = try make("instance-1")
        let second = try make("instance-2")
        var silent: FleetCoordinator? = try make("instance-3")
        #expect(first.liveInstances == 1, "at least 1 before any heartbeat")
        try await first.start()
        #expect(first.liveInstances == 1)
        try await second.start()
        #expect(second.liveInstances == 2)
        try await silent!.start()
        #expect(silent!.liveInstances == 3)
        #expect(await eventually(within: 2) { first.liveInstances == 3 && second.liveInstances == 3 }, "every instance sees 3")
        let score = { (id: String) async throws in try await redis.send(RedisCommand("ZSCORE", "\(testPrefix)instances", id)) }

        // Shut down: it leaves the set at once, and its heartbeat ends.
        await second.shutdown()
        #expect(try await score("instance-2") == .null)
        #expect(await eventually(within: 2) { first.liveInstances == 2 }, "one shut down: \(first.liveInstances)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await score("instance-2") == .null, "no heartbeat after shutdown")

        // Dropped without shutdown, like a process that died: its heartbeat stops, and it lapses.
        silent = nil
        let dropped = Deadline.now()
        #expect(try await score("instance-3") != .null, "still counted until it lapses")
        #expect(await eventually(within: 3) { first.liveInstances == 1 }, "the silent one lapsed: \(first.liveInstances)")
        #expect(milliseconds(since: dropped) >= 200, "not before its lapse (400 ms after its last renewal)")
        #expect(try await score("instance-3") == .null, "removed by the others' heartbeat")
        #expect(first.liveInstances == 1)

        // The set expires when its last member lapses.
        let ttl = try #require(try await redis.send(RedisCommand("PTTL", "\(testPrefix)instances")).integer)
        #expect(ttl > 0 && ttl <= 400, "\(ttl)")
        await first.shutdown()
        #expect(try await redis.send(RedisCommand("EXISTS", "\(testPrefix)instances")) == .integer(0))
    }

    @Test func startAndShutdownAreIdempotentAndAShutDownCoordinatorRefusesWork() async throws {
        let server = try await RedisServer.start()
        let coordinator = try makeCoordinator(server.url())
        try await coordinator.start()
        try await coordinator.start()
        #expect(coordinator.isAvailable)
        await coordinator.shutdown()
        await coordinator.shutdown()
        #expect(!coordinator.isAvailable)
        let error = await #expect(throws: RedisError.self) { try await coordinator.start() }
        #expect(error?.kind == .shutdown)
        let admission = await coordinator.admit(endpointKey: "e/v1", limit: RateLimit(requestsPerSecond: 1, burst: 1), maxWait: nil)
        #expect(unavailableError(admission)?.kind == .shutdown)
        withExtendedLifetime(server) {}
    }
}
