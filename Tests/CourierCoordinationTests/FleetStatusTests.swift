@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Testing

/// Every key and value in the database (types and contents, not expiries, which tick).
private func snapshot(_ redis: RedisClient) async throws -> [String: RESPValue] {
    var values: [String: RESPValue] = [:]
    for key in try await redis.send(RedisCommand("KEYS", "*")).elements?.compactMap(\.string) ?? [] {
        switch try await redis.send(RedisCommand("TYPE", key)).string {
        case "hash": values[key] = try await redis.send(RedisCommand("HGETALL", key))
        case "zset": values[key] = try await redis.send(RedisCommand("ZRANGE", key, "0", "-1", "WITHSCORES"))
        default: values[key] = try await redis.send(RedisCommand("DUMP", key))
        }
    }
    return values
}

/// `courier fleet status`'s reading: what the fleet holds, read without writing.
@Suite(.serialized) struct FleetStatusTests {
    @Test func aRateLimitStateIsComputedFromItsHash() throws {
        let keys = FleetKeys(prefix: "p:")
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        let key = keys.rateLimit(endpointKey: "e/v1", limit: limit)
        let now: Int64 = 1_700_000_000_000_000
        // TAT 400 ms ahead with a tolerance of 180 ms: the next request goes in 220 ms.
        let busy = try #require(FleetStatus.rateLimitState(
            key: key, fields: ["tat": String(now + 400_000), "interval": "20000", "burst": "10"], now: now, keys: keys
        ))
        #expect(busy.endpointKey == "e/v1" && busy.settings == FleetKeys.settingsHash(limit))
        #expect(busy.requestsPerSecond == 50 && busy.burst == 10)
        #expect(busy.nextAllowedIn == .milliseconds(220) && busy.pauseLeft == .zero)
        let paused = try #require(FleetStatus.rateLimitState(
            key: key, fields: ["tat": String(now - 5), "paused": String(now + 2_000_000), "interval": "20000", "burst": "10"], now: now, keys: keys
        ))
        #expect(paused.nextAllowedIn == .seconds(2) && paused.pauseLeft == .seconds(2))
        let idle = try #require(FleetStatus.rateLimitState(key: key, fields: ["tat": String(now + 10_000), "interval": "20000", "burst": "10"], now: now, keys: keys))
        #expect(idle.nextAllowedIn == .zero)
        // Odd contents: what can be read is, the rest is absent, nothing traps.
        let odd = try #require(FleetStatus.rateLimitState(key: key, fields: ["tat": "1e300", "paused": "nan", "interval": "0", "burst": "x"], now: now, keys: keys))
        #expect(odd.requestsPerSecond == nil && odd.burst == nil && odd.nextAllowedIn == .zero && odd.pauseLeft == .zero)
        #expect(FleetStatus.rateLimitState(key: key, fields: [:], now: now, keys: keys) == nil, "expired meanwhile")
        #expect(FleetStatus.rateLimitState(key: "p:rl:junk", fields: ["tat": "1"], now: now, keys: keys) == nil)
    }

    @Test func statusShowsInstancesAndKeysAndWritesNothing() async throws {
        let server = try await RedisServer.start()
        let redis = try inspector(server)
        defer { redis.shutdown() }
        // A prefix with glob characters: the scan must match it literally, not `courier:t1:` too.
        let prefix = "courier:t[1]:"
        let first = try makeCoordinator(server.url(), prefix: prefix, instanceID: "instance-a")
        let second = try makeCoordinator(server.url(), prefix: prefix, instanceID: "instance-b")
        try await first.start()
        try await second.start()
        let busy = RateLimit(requestsPerSecond: 50, burst: 10)
        let quiet = RateLimit(requestsPerSecond: 2, burst: 5)
        for _ in 0..<30 { _ = await first.admit(endpointKey: "api.example.com/v1", limit: busy, maxWait: nil) }
        _ = await second.admit(endpointKey: "api.example.com/v2", limit: quiet, maxWait: nil)
        #expect((try? await second.pause(endpointKey: "search.example.com/q", limit: quiet, for: .seconds(30)).get()) != nil)
        // Keys the reader must skip: another prefix that an unescaped pattern would match, a string under the
        // pattern, and one with a rate-limit key's name that is not a hash.
        _ = try await redis.send(RedisCommand("SET", "courier:t1:rl:{x}:0123456789ab", "other prefix"))
        _ = try await redis.send(RedisCommand("SET", "\(prefix)rl:junk", "junk"))
        _ = try await redis.send(RedisCommand("SET", "\(prefix)rl:{x}:0123456789ab", "not a hash"))

        // The reader logs in as a user who may only read, and only the commands status uses.
        _ = try await redis.send(RedisCommand("ACL", "SETUSER", "reader", "on", ">reader-pw", "resetkeys", "%R~*", "-@all", "+ping", "+time", "+scan", "+hgetall", "+zrangebyscore"))
        let reader = try makeCoordinator(server.url(user: "reader", password: "reader-pw"), prefix: prefix)
        let before = try await snapshot(redis)
        let dbsize = try await redis.send(RedisCommand("DBSIZE"))
        let status = try await reader.status()
        #expect(try await snapshot(redis) == before)
        #expect(try await redis.send(RedisCommand("DBSIZE")) == dbsize)

        #expect(status.complete)
        #expect(status.instances.map(\.id) == ["instance-a", "instance-b"])
        #expect(status.instances.allSatisfy { $0.lapsesIn > .seconds(170) && $0.lapsesIn <= .seconds(180) }, "\(status.instances)")
        #expect(status.rateLimits.map(\.endpointKey) == ["api.example.com/v1", "api.example.com/v2", "search.example.com/q"])
        let v1 = status.rateLimits[0], v2 = status.rateLimits[1], search = status.rateLimits[2]
        #expect(v1.key == FleetKeys(prefix: prefix).rateLimit(endpointKey: "api.example.com/v1", limit: busy))
        #expect(v1.settings == FleetKeys.settingsHash(busy) && v1.requestsPerSecond == 50 && v1.burst == 10)
        // 30 admissions at 50/s with a burst of 10: the next slot is about 20 × 20 ms away.
        #expect(milliseconds(v1.nextAllowedIn) > 300 && milliseconds(v1.nextAllowedIn) <= 420, "\(v1)")
        #expect(v1.pauseLeft == .zero)
        #expect(v2.requestsPerSecond == 2 && v2.burst == 5 && v2.nextAllowedIn == .zero && v2.pauseLeft == .zero)
        #expect(search.pauseLeft > .seconds(29) && search.pauseLeft <= .seconds(30) && search.nextAllowedIn == search.pauseLeft)

        // A bound on the keys read: the rest is reported as not read.
        let partial = try await reader.status(maxKeys: 1)
        #expect(partial.rateLimits.count <= 1 && !partial.complete)
        #expect(try await snapshot(redis) == before)
        for coordinator in [first, second, reader] { await coordinator.shutdown() }
    }

    /// docs/fleet.md's ACL for an instance: the commands it lists are enough for everything a coordinator does.
    @Test func theDocumentedACLIsEnough() async throws {
        let server = try await RedisServer.start()
        let redis = try inspector(server)
        defer { redis.shutdown() }
        _ = try await redis.send(RedisCommand(
            "ACL", "SETUSER", "courier", "on", ">fleet-pw", "resetkeys", "~courier:*", "resetchannels", "-@all",
            "+ping", "+evalsha", "+eval", "+time", "+hmget", "+hset", "+pexpire", "+zadd", "+zremrangebyscore", "+zrange",
            "+zcard", "+zrem", "+scan", "+hgetall", "+zrangebyscore"
        ))
        let coordinator = try makeCoordinator(server.url(user: "courier", password: "fleet-pw"), heartbeat: .milliseconds(100), lapse: .milliseconds(300))
        try await coordinator.start()
        let limit = RateLimit(requestsPerSecond: 10, burst: 1)
        #expect(goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil)) == .zero)
        let paused = await coordinator.pause(endpointKey: "e/v1", limit: limit, for: .seconds(1))
        #expect((try? paused.get()) != nil, "\(paused)")
        try await Task.sleep(for: .milliseconds(250))
        let status = try await coordinator.status()
        #expect(status.instances.count == 1 && status.rateLimits.count == 1)
        // And without EVALSHA the start fails, clearly.
        _ = try await redis.send(RedisCommand("ACL", "SETUSER", "courier", "-evalsha", "-eval"))
        let refused = try makeCoordinator(server.url(user: "courier", password: "fleet-pw"))
        let error = await #expect(throws: RedisError.self) { try await refused.start() }
        #expect(error?.serverCode == "NOPERM", "\(String(describing: error))")
        await refused.shutdown()
        await coordinator.shutdown()
    }
}
