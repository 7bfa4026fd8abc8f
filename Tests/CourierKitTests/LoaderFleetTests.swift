import CourierCore
import CourierKit
import CourierTestSupport
import CourierTransport
import Foundation
import Synchronization
import Testing

/// Fleet-scoped limits through the data loader (issue 24), with a real redis-server and real HTTP servers on
/// 127.0.0.1: many services as many instances, and Redis killed, restarted and stopped under them.
@Suite(.timeLimit(.minutes(2)), .serialized) struct LoaderFleetTests {
    static func policy(redis: String, limit: String, timeout: String = "100ms", onUnavailable: String = "local") -> String {
        """
        version: 1
        coordination:
          redis: { url: "\(redis)", timeout: \(timeout) }
          on-unavailable: \(onUnavailable)
        services:
          local:
            hosts: [127.0.0.1]
            scheme: http
            timeouts: { total: 30s }
            retry: { max-attempts: 1 }
            rate-limit: { \(limit), scope: fleet }
        """
    }

    /// A trace observer that keeps the coordination events.
    final class CoordinationEvents: Sendable {
        let events = Mutex<[CoordinationEvent]>([])
        func observe(_ service: DataLoaderService) {
            service.addTraceObserver { [self] event in
                if case .coordination(let e) = event.kind { events.withLock { $0.append(e) } }
            }
        }
        var unavailable: Int {
            events.withLock { $0.filter { if case .unavailable = $0 { return true } else { return false } }.count }
        }
    }

    @Test func sixtyFourInstancesInOneProcessKeepTheFleetLimit() async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer()
        defer { server.stop() }
        let graph = try compile(Self.policy(redis: redis.url(), limit: "requests-per-second: 50, burst: 10"))
        // One transport for all (an instance's own would start an event-loop thread each).
        let client = HTTPClient()
        defer { client.shutdown() }
        let services = (0..<64).map { _ in DataLoaderService(graph: graph, configuration: .testing(), client: client) }
        for service in services { try await service.start() }
        // Each instance keeps 2 loads going for 2.5 s: 128 in flight against 50 a second.
        let stop = ContinuousClock.now + .milliseconds(2_500)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, service) in services.enumerated() {
                let loader = service.makeFactory().makeLoader()
                for lane in 0..<2 {
                    group.addTask {
                        var n = 0
                        while ContinuousClock.now < stop {
                            let response = try await loader.load(Request(url: server.url("/v1/\(index)/\(lane)/\(n)")))
                            #expect(response.status == 200)
                            n += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let times = server.requests.map(\.received).sorted()
        let start = try #require(times.first)
        let inWindow = times.filter { $0 < start + .seconds(2) }.count
        #expect(inWindow <= 111, "\(inWindow) requests in the first 2 s (limit 50/s, burst 10)")
        #expect(inWindow >= 99, "\(inWindow) requests in the first 2 s")
        for service in services { await service.shutdown(gracePeriod: .zero) }
    }

    /// Each load's trace names how its shared token was got: the first instance refreshes it for the fleet (the
    /// lock), the second reuses what the first stored, and after a 401 the refresh is the loader's `refreshing`
    /// event with the store's decision beside it.
    @Test func theTraceNamesEachSharedTokenDecision() async throws {
        let redis = try await RedisServer.start()
        let tokens = try RotatingTokenServer(delay: .milliseconds(10))
        defer { tokens.stop() }
        let refuseOnce = Mutex(true)
        let server = try RecordingServer { _, request in
            let fresh = request.header("Authorization") == "Bearer \(tokens.accessToken(tokens.refreshes))"
            if request.path == "/v1/refused", refuseOnce.withLock({ let first = $0; $0 = false; return first }) {
                return RecordingServer.Reply(status: 401, headers: [("WWW-Authenticate", "Bearer")], body: "no")
            }
            return RecordingServer.Reply(status: fresh ? 200 : 401, body: "fine")
        }
        defer { server.stop() }
        let graph = try compile(fleetTokenPolicy(
            redis: redis.url(), tokenURL: tokens.url(), clientID: "trace-test", tokenKeyVariable: "TOKEN_KEY", refreshTokenVariable: "REFRESH_TOKEN"
        ))
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let configuration = DataLoaderService.Configuration.testing {
            $0.environment = ["TOKEN_KEY": key, "REFRESH_TOKEN": tokens.initialRefreshToken]
        }
        let first = DataLoaderService(graph: graph, configuration: configuration)
        let second = DataLoaderService(graph: graph, configuration: configuration)
        let firstEvents = CoordinationEvents(), secondEvents = CoordinationEvents()
        firstEvents.observe(first)
        secondEvents.observe(second)
        try await first.start()
        try await second.start()
        func decisions(_ events: CoordinationEvents) -> [CoordinationEvent.SharedTokenDecision] {
            events.events.withLock { $0.compactMap { if case .sharedToken("partner", let d) = $0 { d } else { nil } } }
        }
        #expect(try await first.makeFactory().makeLoader().load(Request(url: server.url("/v1/a"))).status == 200)
        #expect(decisions(firstEvents) == [.refreshed])
        #expect(try await second.makeFactory().makeLoader().load(Request(url: server.url("/v1/b"))).status == 200)
        #expect(decisions(secondEvents) == [.reused])
        // A new user's authoriser reuses the stored token too; it meets a 401, refreshes for the fleet, and its
        // trace says so.
        #expect(try await second.makeFactory().makeLoader().load(Request(url: server.url("/v1/refused"))).status == 200)
        #expect(decisions(secondEvents) == [.reused, .reused, .refreshed], "\(secondEvents.events.withLock { $0 })")
        #expect(tokens.refreshes == 2)
        #expect(tokens.replays == 0)
        for event in secondEvents.events.withLock({ $0 }) { #expect(!"\(event)".contains(tokens.accessToken(1))) }
        await first.shutdown(gracePeriod: .zero)
        await second.shutdown(gracePeriod: .zero)
    }

    @Test func redisKilledAndRestartedLosesNoLoadAndSharingResumes() async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer()
        defer { server.stop() }
        let service = DataLoaderService(
            graph: try compile(Self.policy(redis: redis.url(), limit: "requests-per-second: 200, burst: 20")), configuration: .testing()
        )
        let events = CoordinationEvents()
        events.observe(service)
        try await service.start()
        let loader = service.makeFactory().makeLoader()
        func loadSome(_ count: Int, _ tag: String) async throws {
            for n in 0..<count {
                let response = try await loader.load(Request(url: server.url("/v1/\(tag)/\(n)")))
                #expect(response.status == 200)
            }
        }
        try await loadSome(20, "before")
        #expect(events.unavailable == 0)
        await redis.kill()
        // Redis is gone: every load still goes (on-unavailable: local), none fails.
        try await loadSome(40, "down")
        #expect(events.unavailable > 0)
        try await redis.restart()
        // Back within the reconnection back-off (capped at 1 s), with an empty script cache (NOSCRIPT handled).
        let back = ContinuousClock.now + .seconds(5)
        var before = events.unavailable
        var shared = false
        while ContinuousClock.now < back && !shared {
            try await loadSome(5, "after")
            shared = events.unavailable == before
            before = events.unavailable
            if !shared { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(shared, "the loader did not go back to Redis within 5 s of its restart")
        #expect(server.requests.count >= 65)
        await service.shutdown(gracePeriod: .zero)
    }

    @Test func aHungRedisCostsTheTimeoutOnlyUntilTheBreakerOpens() async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer()
        defer { server.stop() }
        let service = DataLoaderService(
            graph: try compile(Self.policy(redis: redis.url(), limit: "requests-per-second: 1000, burst: 100", timeout: "250ms")),
            configuration: .testing()
        )
        let events = CoordinationEvents()
        events.observe(service)
        try await service.start()
        let loader = service.makeFactory().makeLoader()
        redis.pause()
        defer { redis.resume() }
        // 40 loads one after another with Redis stopped (SIGSTOP): paying the 250 ms timeout each would take 10 s;
        // once the breaker opens they go at once under on-unavailable: local.
        let started = ContinuousClock.now
        for n in 0..<40 {
            let response = try await loader.load(Request(url: server.url("/v1/hung/\(n)")))
            #expect(response.status == 200)
        }
        let took = ContinuousClock.now - started
        #expect(took < .seconds(4), "40 loads took \(took) with Redis hung")
        #expect(events.unavailable == 40)
        redis.resume()
        await service.shutdown(gracePeriod: .zero)
    }

    @Test func onUnavailableClosedFailsTheLoadWithTheCoordinationKind() async throws {
        let closed = try ClosedPort()
        let server = try RecordingServer()
        defer { server.stop() }
        let service = DataLoaderService(
            graph: try compile(Self.policy(redis: "redis://127.0.0.1:\(closed.port)", limit: "requests-per-second: 10", onUnavailable: "closed")),
            configuration: .testing()
        )
        await #expect(throws: CourierError.self) { try await service.start() }
        let loader = service.makeFactory().makeLoader()
        do {
            _ = try await loader.load(Request(url: server.url("/v1/x")))
            Issue.record("the load went without its fleet limit")
        } catch {
            #expect(error.kind == .coordination)
            #expect(error.message.contains("127.0.0.1:\(closed.port)"), "\(error.message)")
        }
        #expect(server.requests.isEmpty)

        // open: the limit is dropped, the load goes.
        let open = DataLoaderService(
            graph: try compile(Self.policy(redis: "redis://127.0.0.1:\(closed.port)", limit: "requests-per-second: 10", onUnavailable: "open")),
            configuration: .testing()
        )
        let response = try await open.makeFactory().makeLoader().load(Request(url: server.url("/v1/y")))
        #expect(response.status == 200)
        await service.shutdown(gracePeriod: .zero)
        await open.shutdown(gracePeriod: .zero)
    }

    @Test func aLocalShareDividesTheLimitByTheInstancesLastSeen() async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer()
        defer { server.stop() }
        let graph = try compile(Self.policy(redis: redis.url(), limit: "requests-per-second: 40, burst: 4"))
        // Four instances register; then Redis goes away and one of them loads alone on its local share: 10/s, burst 1.
        let services = (0..<4).map { _ in DataLoaderService(graph: graph, configuration: .testing()) }
        for service in services { try await service.start() }
        // Wait for a heartbeat round so that every instance has counted the others.
        try await Task.sleep(for: .milliseconds(1_300))
        await redis.kill()
        let loader = services[0].makeFactory().makeLoader()
        let started = ContinuousClock.now
        for n in 0..<11 {
            _ = try await loader.load(Request(url: server.url("/v1/share/\(n)")))
        }
        // 11 requests at 10/s with burst 1: the last goes 1 s after the first.
        let took = ContinuousClock.now - started
        #expect(took >= .milliseconds(900), "11 loads took \(took) on a local share of 10/s")
        for service in services { await service.shutdown(gracePeriod: .zero) }
    }
}
