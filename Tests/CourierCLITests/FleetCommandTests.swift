import CourierCore
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 24 with whole `courier` processes, as a fleet's instances are: several `courier fetch --policy` runs share
/// one rate limit and one Retry-After pause through a real redis-server, and `courier fleet status` reads what they
/// left. Each test starts its own Redis and HTTP server on 127.0.0.1.
@Suite(.timeLimit(.minutes(2)), .onBlockingThreads, .serialized) struct FleetCommandTests {
    /// A policy whose `local` service (127.0.0.1, plain http) has a fleet-scoped limit.
    /// Redis's command timeout is 2 s: on a busy 2-core machine 64 processes starting at once see calls take
    /// over 200 ms, and a load that times out degrades to a local share of the limit (`on-unavailable: local`),
    /// which is not what these tests measure.
    static func policy(
        redis: String, limit: String, extraService: String = "", coordination: String = "", onUnavailable: String = "local"
    ) -> String {
        """
        version: 1
        coordination:
          redis:
            url: "\(redis)"
            timeout: 2s
        \(coordination)
          on-unavailable: \(onUnavailable)
        services:
          local:
            hosts: [127.0.0.1]
            scheme: http
            timeouts: { total: 30s }
            rate-limit: { \(limit), scope: fleet }
        \(extraService)
        """
    }

    /// Starts `count` `courier` processes at once with `arguments(index)` and waits for all of them.
    static func runAll(_ count: Int, timeout: Double = 60, _ arguments: @escaping @Sendable (Int) -> [String]) async throws -> [CourierProcess.Result] {
        try await withThrowingTaskGroup(of: (Int, CourierProcess.Result).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await CourierProcess.run(arguments(index), timeout: timeout)) }
            }
            var results = [CourierProcess.Result?](repeating: nil, count: count)
            for try await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    /// Runs `body` with a fresh Redis, a recording server and a policy file whose `local` service the fleet limits
    /// to 50 requests per second with a burst of 10.
    static func withFiftyPerSecond(_ body: (_ server: RecordingServer, _ policy: String) async throws -> Void) async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        try await body(server, try files.write("policy.yaml", Self.policy(redis: redis.url(), limit: "requests-per-second: 50, burst: 10")))
        withExtendedLifetime(redis) {}
    }

    @Test func eightProcessesKeepOneFleetLimitAndStarveNone() async throws {
        try await Self.withFiftyPerSecond { server, policy in
            // 8 processes x 40 URLs, 8 in flight each: 320 requests, more than the 210 the limit lets through in 4 s,
            // so every instance has demand for the whole window.
            let urls = (0..<40).map { server.url("/v1/item/\($0)") }
            let results = try await Self.runAll(8) { _ in ["fetch", "--policy", policy, "--parallel", "8"] + urls }
            for result in results { #expect(result.status == 0, "\(result.stderr)") }
            let times = server.requests.map(\.received).sorted()
            #expect(times.count == 320)
            let start = try #require(times.first)
            let inWindow = times.filter { $0 < start + .seconds(4) }.count
            // GCRA: at most burst + rate x window (plus 1 %), and at least 90 % of it (no instance starves the others).
            #expect(inWindow <= 212, "\(inWindow) requests in the first 4 s")
            #expect(inWindow >= 189, "\(inWindow) requests in the first 4 s")

            // What they left in Redis: the limit's key, and no live instance (each left the set when it finished).
            let status = try await CourierProcess.run(["fleet", "status", "--policy", policy, "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            let limits = try #require(object["rate_limits"] as? [[String: Any]])
            #expect(limits.count == 1)
            #expect(limits.first?["endpoint_key"] as? String == "127.0.0.1/v1")
            #expect(limits.first?["requests_per_second"] as? Double == 50)
            #expect(limits.first?["burst"] as? Int == 10)
            #expect((object["instances"] as? [Any])?.count == 0, "\(status.stdout)")
            let text = try await CourierProcess.run(["fleet", "status", "--policy", policy])
            #expect(text.stdout.contains("127.0.0.1/v1  50 req/s, burst 10"), "\(text.stdout)")
        }
    }

    /// Issue 24's scale test: 64 instances, each a `courier` process with its own Redis connection and heartbeat,
    /// against one Redis keep the same bound. They start over a second or two on a small machine, so the window is
    /// taken a second after the first request, when every instance is up and has demand (8 URLs each, 512 requests
    /// at 50 a second: about 10 s of demand). GCRA bounds every window, not only the first.
    @Test func sixtyFourProcessesKeepOneFleetLimit() async throws {
        try await Self.withFiftyPerSecond { server, policy in
            let results = try await Self.runAll(64, timeout: 90) { index in
                ["fetch", "--policy", policy, "--parallel", "2"] + (0..<8).map { server.url("/v1/\(index)/\($0)") }
            }
            for result in results { #expect(result.status == 0, "\(result.stderr)") }
            let times = server.requests.map(\.received).sorted()
            #expect(times.count == 512)
            let from = try #require(times.first) + .seconds(1)
            let inWindow = times.filter { $0 >= from && $0 < from + .seconds(4) }.count
            #expect(inWindow <= 212, "\(inWindow) requests in 4 s (limit 50/s, burst 10)")
            #expect(inWindow >= 189, "\(inWindow) requests in 4 s")
            // Every instance got its turn: none was starved while the others sent.
            let senders = Set(server.requests.map { $0.path.split(separator: "/")[1] })
            #expect(senders.count == 64)
        }
    }

    @Test func aRetryAfterReceivedByOneProcessPausesEveryProcess() async throws {
        let redis = try await RedisServer.start()
        let server = try RecordingServer { index, _ in
            index == 0 ? RecordingServer.Reply(status: 429, headers: [("Retry-After", "2")], body: "slow down") : RecordingServer.Reply(body: "fine")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", Self.policy(
            redis: redis.url(), limit: "requests-per-second: 100, burst: 100",
            extraService: "    retry: { max-attempts: 2, on: [429], backoff: { initial: 10ms, jitter: none } }"
        ))
        // The first process gets the 429 and waits out its Retry-After itself.
        async let first = CourierProcess.run(["fetch", "--policy", policy, server.url("/v1/first")])
        let deadline = ContinuousClock.now + .seconds(20)
        while server.requests.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let paused = try #require(server.requests.first).received
        // Two others start after it: they must wait for the same pause, though they never saw a 429.
        let others = try await Self.runAll(2) { index in ["fetch", "--policy", policy, server.url("/v1/other/\(index)")] }
        let firstResult = try await first
        #expect(firstResult.status == 0, "\(firstResult.stderr)")
        for result in others { #expect(result.status == 0, "\(result.stderr)") }
        let later = server.requests.dropFirst()
        #expect(later.count == 3)
        for request in later {
            // Retry-After: 2, shared through Redis; a little less allowed for the two clocks' reading.
            #expect(request.received - paused >= .milliseconds(1_900), "\(request.path) came \(request.received - paused) after the 429")
        }
    }

    @Test func eightProcessesMeetingA401TogetherRefreshTheRotatingTokenOnce() async throws {
        let redis = try await RedisServer.start()
        let tokens = try RotatingTokenServer(delay: .milliseconds(50))
        defer { tokens.stop() }
        // The resource server accepts the newest access token only, and after 40 answers revokes it: every load in
        // flight in every process meets a 401 at once.
        let revokedUpTo = Mutex(0)
        let answered = Mutex(0)
        let server = try RecordingServer { _, request in
            let newest = tokens.refreshes
            let valid = request.header("Authorization") == "Bearer \(tokens.accessToken(newest))" && newest > revokedUpTo.withLock { $0 }
            guard valid else { return RecordingServer.Reply(status: 401, headers: [("WWW-Authenticate", "Bearer")], body: "no") }
            if answered.withLock({ n in n += 1; return n }) == 40 { revokedUpTo.withLock { $0 = newest } }
            return RecordingServer.Reply(body: "fine")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", fleetTokenPolicy(
            redis: redis.url(), tokenURL: tokens.url(), clientID: "fleet-test",
            tokenKeyVariable: "COURIER_TEST_TOKEN_KEY", refreshTokenVariable: "COURIER_TEST_REFRESH_TOKEN"
        ))
        let key = Base64Key.random32()
        let environment = ["COURIER_TEST_TOKEN_KEY": key, "COURIER_TEST_REFRESH_TOKEN": tokens.initialRefreshToken]
        let urls = (0..<20).map { server.url("/v1/item/\($0)") }
        let results = try await withThrowingTaskGroup(of: CourierProcess.Result.self) { group in
            for _ in 0..<8 {
                group.addTask { try await CourierProcess.run(["fetch", "--policy", policy, "--parallel", "20", "--fail"] + urls, environment: environment) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        // One refresh at the cold start, one after the fleet-wide 401; no replay, so the family lives.
        #expect(tokens.refreshes == 2)
        #expect(tokens.replays == 0)
        #expect(!tokens.revoked)
        #expect(answered.withLock { $0 } == 160)
    }

    @Test func onUnavailableClosedSendsNothingWhenRedisCannotBeReached() async throws {
        let closed = try ClosedPort()
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", Self.policy(
            redis: "redis://127.0.0.1:\(closed.port)", limit: "requests-per-second: 10", onUnavailable: "closed"
        ))
        let result = try await CourierProcess.run(["fetch", "--policy", policy, "--json-report", "-", server.url("/v1/x")])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("127.0.0.1:\(closed.port)"), "\(result.stderr)")
        #expect(result.stderr.contains("on-unavailable: closed"), "\(result.stderr)")
        #expect(server.requests.isEmpty)
    }

    @Test func aWrongPasswordIsAClearErrorAtStartUpAndLocalStillFetches() async throws {
        let redis = try await RedisServer.start(password: "right-password")
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let password = "    password: \"${env:COURIER_TEST_REDIS_PASSWORD}\""
        let closedPolicy = try files.write("closed.yaml", Self.policy(
            redis: redis.url(), limit: "requests-per-second: 10", coordination: password, onUnavailable: "closed"
        ))
        let wrong = ["COURIER_TEST_REDIS_PASSWORD": "wrong-password"]
        let refused = try await CourierProcess.run(["fetch", "--policy", closedPolicy, server.url("/v1/x")], environment: wrong)
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(refused.stderr.contains("127.0.0.1:\(redis.port)"), "\(refused.stderr)")
        #expect(refused.stderr.lowercased().contains("auth"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("wrong-password"))
        #expect(server.requests.isEmpty)

        let localPolicy = try files.write("local.yaml", Self.policy(redis: redis.url(), limit: "requests-per-second: 10", coordination: password))
        let degraded = try await CourierProcess.run(["fetch", "--policy", localPolicy, server.url("/v1/x")], environment: wrong)
        #expect(degraded.status == 0, "\(degraded.stderr)")
        #expect(degraded.stderr.contains("on-unavailable: local"), "\(degraded.stderr)")
        #expect(server.requests.count == 1)

        let right = try await CourierProcess.run(
            ["fetch", "--policy", closedPolicy, server.url("/v1/x")], environment: ["COURIER_TEST_REDIS_PASSWORD": "right-password"]
        )
        #expect(right.status == 0, "\(right.stderr)")
        #expect(!right.stderr.contains("on-unavailable"), "\(right.stderr)")
    }

    @Test func fleetStatusWithoutACoordinationSectionOrBackendSaysSo() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let plain = try files.write("plain.yaml", "version: 1\nservices:\n  a:\n    hosts: [a.example.com]\n")
        let none = try await CourierProcess.run(["fleet", "status", "--policy", plain])
        #expect(none.status == 1)
        #expect(none.stderr.contains("no coordination section"), "\(none.stderr)")

        let closed = try ClosedPort()
        let unreachable = try files.write("unreachable.yaml", Self.policy(redis: "redis://127.0.0.1:\(closed.port)", limit: "requests-per-second: 1"))
        let down = try await CourierProcess.run(["fleet", "status", "--policy", unreachable])
        #expect(down.status == 69, "\(down.stderr)")
        #expect(down.stderr.contains("127.0.0.1:\(closed.port)"), "\(down.stderr)")
    }
}

/// A random 32-byte token key in base64, as `openssl rand -base64 32` makes.
enum Base64Key {
    static func random32() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }
}
