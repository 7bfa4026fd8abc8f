@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Foundation
import CourierTransport
import Testing

/// The fleet's GCRA and pauses against a real redis-server (one per test).
@Suite(.serialized) struct FleetRateLimitTests {
    /// The same sequence of admissions and pauses through Redis and through the process-local limiter gives the
    /// same waits, within the round trips' spread (Redis reads its own clock when the script runs, somewhere inside
    /// the call's round trip).
    @Test(arguments: [(20.0, 3), (3.0, 2), (1000.0, 50)])
    func waitsMatchTheProcessLocalLimiter(rate: Double, burst: Int) async throws {
        let server = try await RedisServer.start()
        let coordinator = try makeCoordinator(server.url())
        try await coordinator.start()
        let limit = RateLimit(requestsPerSecond: rate, burst: burst)
        var local = RateLimiterStateMachine()
        var slowestRoundTrip = Duration.zero
        var differences: [Double] = []
        func admit(_ count: Int) async {
            for _ in 0..<count {
                let before = Deadline.now()
                let expected = local.admit(key: "k", limit: limit, now: before) - before
                let admission = await coordinator.admit(endpointKey: "api.example.com/v1", limit: limit, maxWait: nil)
                slowestRoundTrip = max(slowestRoundTrip, Deadline.now() - before)
                guard let wait = goWait(admission) else { return }
                differences.append(milliseconds(wait - expected))
            }
        }
        func pause(_ duration: Duration) async {
            local.pause(key: "k", until: Deadline.now() + duration)
            let result = await coordinator.pause(endpointKey: "api.example.com/v1", limit: limit, for: duration)
            #expect((try? result.get()) != nil, "\(result)")
        }
        await admit(burst + 5)
        try await Task.sleep(for: .milliseconds(180))
        await admit(4)
        await pause(.milliseconds(300))
        await admit(burst + 2)
        await pause(.milliseconds(100))  // shorter: changes nothing
        await admit(2)
        try await Task.sleep(for: .milliseconds(400))
        await admit(3)
        let worst = differences.map(abs).max() ?? .infinity
        #expect(differences.count == 2 * burst + 16)
        #expect(worst <= milliseconds(slowestRoundTrip) + 1, "waits differ by up to \(worst) ms: \(differences)")
        print("fleet: \(differences.count) admissions at \(rate)/s burst \(burst) matched the local limiter within \(String(format: "%.3f", worst)) ms (slowest round trip \(String(format: "%.3f", milliseconds(slowestRoundTrip))) ms)")
        await coordinator.shutdown()
    }

    @Test func aChangedLimitStartsAFreshKeyThatStoresItsSettings() async throws {
        let (server, coordinator, redis) = try await startServerWithCoordinator()
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        let before = RateLimit(requestsPerSecond: 10, burst: 1)
        for index in 0..<5 {
            let wait = goWait(await coordinator.admit(endpointKey: "e/v1", limit: before, maxWait: nil))
            #expect(wait.map { abs(milliseconds($0) - Double(index) * 100) < 20 } == true, "\(String(describing: wait))")
        }
        let after = RateLimit(requestsPerSecond: 10, burst: 2)
        #expect(goWait(await coordinator.admit(endpointKey: "e/v1", limit: after, maxWait: nil)) == .zero, "a fresh schedule")
        let keys = FleetKeys(prefix: testPrefix)
        let old = keys.rateLimit(endpointKey: "e/v1", limit: before)
        let new = keys.rateLimit(endpointKey: "e/v1", limit: after)
        #expect(old != new)
        #expect(try await redis.send(RedisCommand("HMGET", old, "interval", "burst")) == .array([.bulkString(Array("100000".utf8)), .bulkString(Array("1".utf8))]))
        #expect(try await redis.send(RedisCommand("HMGET", new, "interval", "burst")) == .array([.bulkString(Array("100000".utf8)), .bulkString(Array("2".utf8))]))
        await coordinator.shutdown()
    }

    @Test func aWaitLongerThanMaxWaitReservesNothing() async throws {
        let (server, coordinator, redis) = try await startServerWithCoordinator()
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        let limit = RateLimit(requestsPerSecond: 10, burst: 1)
        let key = FleetKeys(prefix: testPrefix).rateLimit(endpointKey: "e/v1", limit: limit)
        #expect(goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: .zero)) == .zero)
        let second = goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: .milliseconds(150)))
        #expect(second.map { milliseconds($0) > 80 && milliseconds($0) <= 100 } == true, "\(String(describing: second))")
        let tat = try await redis.send(RedisCommand("HGET", key, "tat"))
        guard case .wouldWaitTooLong(let refused) = await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: .milliseconds(150)) else {
            Issue.record("a 200 ms wait was accepted under a 150 ms maxWait")
            return
        }
        #expect(milliseconds(refused) > 150 && milliseconds(refused) <= 200)
        #expect(try await redis.send(RedisCommand("HGET", key, "tat")) == tat, "no slot was reserved")
        // The next request gets the slot the refused one did not take (about 200 ms, not 300).
        let next = goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil))
        #expect(next.map { milliseconds($0) > 150 && milliseconds($0) <= 200 } == true, "\(String(describing: next))")
        await coordinator.shutdown()
    }

    @Test func aPauseFromOneInstanceHoldsEveryOtherAndIsNeverShortened() async throws {
        let server = try await RedisServer.start()
        let first = try makeCoordinator(server.url())
        let second = try makeCoordinator(server.url())
        let redis = try inspector(server)
        defer { redis.shutdown() }
        try await first.start()
        try await second.start()
        let limit = RateLimit(requestsPerSecond: 100, burst: 5)
        let key = FleetKeys(prefix: testPrefix).rateLimit(endpointKey: "e/v1", limit: limit)
        let start = Deadline.now()
        #expect((try? await first.pause(endpointKey: "e/v1", limit: limit, for: .seconds(1)).get()) != nil)
        let paused = try await redis.send(RedisCommand("HGET", key, "paused"))
        // The other instance's admissions wait for the pause, a burst of them together, then one per interval.
        var waits: [Double] = []
        for _ in 0..<7 {
            let asked = Deadline.now()
            if let wait = goWait(await second.admit(endpointKey: "e/v1", limit: limit, maxWait: nil)) {
                waits.append(milliseconds(asked - start) + milliseconds(wait))
            }
        }
        #expect(waits.count == 7)
        for (index, end) in waits.enumerated() {
            let expected = 1000.0 + Double(max(0, index - 4)) * 10
            #expect(abs(end - expected) < 30, "admission \(index) goes \(end) ms after the pause began, not \(expected)")
        }
        // A shorter pause changes nothing.
        #expect((try? await second.pause(endpointKey: "e/v1", limit: limit, for: .milliseconds(200)).get()) != nil)
        #expect(try await redis.send(RedisCommand("HGET", key, "paused")) == paused)
        let ttl = try #require(try await redis.send(RedisCommand("PTTL", key)).integer)
        #expect(ttl > 500 && ttl <= 1_100, "the key lives until the pause and its schedule are over: \(ttl) ms")
        // Once both are over, the key is gone and a request goes at once.
        #expect(await eventually(within: 3) { (try? await redis.send(RedisCommand("PTTL", key))) == .integer(-2) }, "the key expired")
        #expect(milliseconds(since: start) >= 1_000)
        #expect(goWait(await first.admit(endpointKey: "e/v1", limit: limit, maxWait: nil)) == .zero)
        await first.shutdown()
        await second.shutdown()
    }
}
