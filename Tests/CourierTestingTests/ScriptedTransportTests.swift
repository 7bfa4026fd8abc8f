import CourierAuthorisers
import CourierCore
import CourierKit
import CourierPolicy
import CourierTesting
import Foundation
import Synchronization
import Testing

/// The whole data loader over ScriptedTransport on a ManualClock: no socket, no real waiting. Every wait the
/// policy makes the loader take is read back from the load's report.
@Suite(.timeLimit(.minutes(1))) struct ScriptedTransportTests {
    /// A service with `yaml`'s policy answering through a new transport on a new manual clock.
    static func service(
        _ yaml: String, _ change: (inout DataLoaderService.Configuration) -> Void = { _ in }
    ) throws -> (DataLoader, ScriptedTransport, ManualClock) {
        let compilation = PolicyCompiler(registry: .standard).compile(source: yaml, path: "/tmp/scripted-tests.yaml")
        if compilation.hasErrors { Issue.record("policy errors: \(compilation.diagnostics)") }
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: .manual(clock))
        var configuration = DataLoaderService.Configuration(userAgent: "scripted-tests/1")
        configuration.environment = [:]
        transport.install(in: &configuration)
        change(&configuration)
        let service = DataLoaderService(graph: try #require(compilation.graph), configuration: configuration)
        return (service.makeFactory().makeLoader(), transport, clock)
    }

    static let backOffPolicy = """
        version: 1
        services:
          api:
            hosts: [api.example.com]
            timeouts: { total: 5m }
            retry: { max-attempts: 3, on: [503], backoff: { initial: 30s, max: 30s, multiplier: 1, jitter: none } }
        """

    @Test func aThirtySecondBackOffPolicyTestRunsInUnderATenthOfASecond() async throws {
        // Wall time from the first load call to the answer: the best of three runs, so that a busy CI machine
        // scheduling the test late once does not fail it. Each run waits 60 virtual seconds.
        var best = Duration.seconds(3600)
        for _ in 0..<3 {
            let (loader, transport, clock) = try Self.service(Self.backOffPolicy)
            try transport.enqueue(.status(503))
            try transport.enqueue(.status(503))
            try transport.enqueue(.text("ok"))
            let started = ContinuousClock.now
            async let loaded = loader.load(Request(url: "https://api.example.com/items"))
            for _ in 0..<2 {
                try await clock.waitForSleepers(1)
                clock.advance(by: .seconds(30))
            }
            let response = try await loaded
            best = min(best, ContinuousClock.now - started)
            #expect(response.status == 200)
            #expect(response.report.attempts.map(\.outcome) == [.status(503), .status(503), .status(200)])
            #expect(response.report.waits == [.backoff(.seconds(30)), .backoff(.seconds(30))])
            #expect(clock.elapsed == .seconds(60))
            let times = transport.requests.map(\.receivedAt)
            #expect(times.count == 3)
            #expect(times.count == 3 && times[1] - times[0] == .seconds(30) && times[2] - times[1] == .seconds(30))
        }
        #expect(best < .milliseconds(100), "best of 3: \(best)")
    }

    @Test func theRouteOfEachHostIsThePolicysService() async throws {
        let (loader, transport, _) = try Self.service("""
            version: 1
            services:
              patient: { hosts: [a.example.com], retry: { max-attempts: 2, on: [503], backoff: { initial: 0s, jitter: none } } }
              impatient: { hosts: [b.example.com], retry: { max-attempts: 1 } }
            """)
        transport.on(.get, "*", host: "a.example.com") { request in request.indexOnConnection == 0 ? .status(503) : .text("a") }
        transport.on(.get, "*", host: "b.example.com") { _ in .status(503) }
        let a = try await loader.load(Request(url: "https://a.example.com/x"))
        let b = try await loader.load(Request(url: "https://b.example.com/x"))
        #expect(a.report.attempts.map(\.outcome) == [.status(503), .status(200)])
        #expect(b.report.attempts.map(\.outcome) == [.status(503)])
        #expect(transport.requests.map(\.host) == ["a.example.com", "a.example.com", "b.example.com"])
        #expect(transport.requests.allSatisfy { $0.connectionID == 0 && $0.headers["user-agent"] == "scripted-tests/1" })
        #expect(transport.requests.map(\.indexOnConnection) == [0, 1, 2])
    }

    @Test func fiveLoadsAtOnePerSecondTakeFourVirtualSeconds() async throws {
        let (loader, transport, clock) = try Self.service("""
            version: 1
            services:
              api: { hosts: [api.example.com], timeouts: { total: 1m }, rate-limit: { requests-per-second: 1, burst: 1 } }
            """)
        transport.on(.get, "*") { _ in .text("ok") }
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Response.self) { group in
            for n in 0..<5 { group.addTask { try await loader.load(Request(url: "https://api.example.com/api/n\(n)")) } }
            try await clock.waitForSleepers(4)
            for second in 1...4 {
                clock.advance(by: .seconds(1))
                #expect(clock.sleepers == 4 - second)
                // The woken load runs once advance returns: let its request arrive before the next second.
                try await transport.waitForRequests(second + 1)
            }
            var waits: [Duration] = []
            for try await response in group {
                waits.append(response.report.waited { if case .rateLimit = $0 { true } else { false } })
            }
            #expect(waits.sorted() == [.zero, .seconds(1), .seconds(2), .seconds(3), .seconds(4)])
        }
        #expect(clock.elapsed == .seconds(4))
        #expect(ContinuousClock.now - started < .seconds(4), "the waits were virtual")
        let times = transport.requests.map { $0.receivedAt - transport.requests[0].receivedAt }.sorted()
        #expect(times == [.zero, .seconds(1), .seconds(2), .seconds(3), .seconds(4)])
    }

    @Test func aRetryAfterOfTwoMinutesIsWaitedOutOnTheClock() async throws {
        let (loader, transport, clock) = try Self.service("""
            version: 1
            services:
              api:
                hosts: [api.example.com]
                timeouts: { total: 10m }
                retry: { max-attempts: 2, on: [429], backoff: { initial: 1s, jitter: none }, retry-after-cap: 5m }
            """)
        try transport.enqueue(.tooManyRequests(retryAfter: 120))
        try transport.enqueue(.text("ok"))
        async let loaded = loader.load(Request(url: "https://api.example.com/a"))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(119))
        #expect(transport.requests.count == 1)
        clock.advance(by: .seconds(1))
        let response = try await loaded
        #expect(response.report.attempts.map(\.outcome) == [.status(429), .status(200)])
        #expect(response.report.waits == [.retryAfter(.seconds(120))])
    }

    /// One attempt; api.example.com falls back to backup.example.net.
    static let fallbackPolicy = """
        version: 1
        services:
          api:
            hosts: [api.example.com]
            retry: { max-attempts: 1 }
            fallbacks: { api.example.com: [backup.example.net] }
        """

    @Test func anUnreachableHostFallsBackToTheNextAddress() async throws {
        let (loader, transport, _) = try Self.service(Self.fallbackPolicy)
        transport.refuseConnections(to: "api.example.com")
        transport.on(.get, "/items") { _ in .json("[]") }
        let response = try await loader.load(Request(url: "https://api.example.com/items"))
        #expect(response.status == 200)
        // The fallback keeps the URL's Host field, as curl's --connect-to does.
        #expect(transport.requests.map(\.host) == ["api.example.com"])

        transport.refuseConnections(to: "backup.example.net")
        let error = await #expect(throws: CourierError.self) {
            try await loader.load(Request(url: "https://api.example.com/items"))
        }
        #expect(error?.kind == .connect)
        #expect(transport.requests.count == 1)
    }

    /// Moved from CourierKitTests' LoaderBehaviourTests, where two loopback servers stood in for the hosts only
    /// to answer a status: an HTTP error is an answer, not an unreachable host.
    @Test func anHTTPErrorDoesNotMoveToAFallback() async throws {
        let (loader, transport, _) = try Self.service(Self.fallbackPolicy)
        transport.on(.get, "/x") { _ in .status(502) }
        let response = try await loader.load(Request(url: "https://api.example.com/x"))
        #expect(response.status == 502)
        #expect(response.addressesTried == ["api.example.com:443"])
        #expect(transport.requests.count == 1)
    }

    @Test func anOAuthRefreshAuthoriserGetsANewTokenFromAScriptedEndpoint() async throws {
        let (loader, transport, _) = try Self.service("""
            version: 1
            authorisers:
              accounts:
                plugin: oauth2-refresh
                settings: { token-url: "https://accounts.example.com/token", client-id: app, refresh-token: "${env:RT}" }
            services:
              api: { hosts: [api.example.com], authoriser: accounts, retry: { max-attempts: 1 } }
            """) { $0.environment = ["RT": "refresh-1"] }
        let grants = Mutex(0)
        transport.on(.post, "/token", host: "accounts.example.com") { request in
            let n = grants.withLock { n in
                n += 1
                return n
            }
            guard request.bodyText.contains("refresh_token=refresh-1") else { return .status(400) }
            return .json(#"{"access_token":"token-\#(n)","token_type":"Bearer","expires_in":3600}"#)
        }
        // The first token is already revoked: the API wants the second.
        transport.on(.get, "/me", host: "api.example.com", requiringBearerToken: "token-2") { _ in .json(#"{"me":1}"#) }
        let response = try await loader.load(Request(url: "https://api.example.com/me"))
        #expect(response.status == 200)
        #expect(response.report.attempts.map(\.outcome) == [.status(401), .status(200)])
        #expect(response.report.refreshes.map(\.authoriser) == ["accounts"])
        #expect(grants.withLock { $0 } == 2)
        let api = transport.requests.filter { $0.host == "api.example.com" }
        #expect(api.map { $0.headers["authorization"] } == ["Bearer token-1", "Bearer token-2"])
    }

    @Test func aCachedAnswerIsFreshFor59VirtualSecondsAndRevalidatedAt61() async throws {
        let directory = NSTemporaryDirectory() + "courier-scripted-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (loader, transport, clock) = try Self.service("""
            version: 1
            services:
              api: { hosts: [api.example.com], cache: { ttl: 5m, max-size: 1MB } }
            """) { $0.cacheDirectory = directory }
        transport.on(.get, "/doc") { request in
            if request.headers["if-none-match"] == #""v1""# { return MockResponse(status: 304, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=60"]) }
            return MockResponse(headers: ["ETag": #""v1""#, "Cache-Control": "max-age=60"], body: "document")
        }
        let first = try await loader.load(Request(url: "https://api.example.com/doc"))
        clock.advance(by: .seconds(59))
        let fresh = try await loader.load(Request(url: "https://api.example.com/doc"))
        clock.advance(by: .seconds(2))
        let revalidated = try await loader.load(Request(url: "https://api.example.com/doc"))
        #expect(first.cache == .miss)
        #expect(fresh.cache == .hit)
        #expect(revalidated.cache == .revalidated)
        #expect(revalidated.body == Array("document".utf8))
        #expect(transport.requests.map { $0.headers["if-none-match"] } == [nil, #""v1""#])
    }

    @Test func aDownloadCutAfter4096BytesIsResumedWhereItStopped() async throws {
        let (loader, transport, _) = try Self.service("""
            version: 1
            services:
              files:
                hosts: [files.example.com]
                retry: { max-attempts: 3, on: [connection-lost], backoff: { initial: 0s, jitter: none }, budget: off }
            """)
        let file = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        transport.on(.get, "/big.bin") { request in
            let answer = MockResponse.ranged(of: file, for: request)
            return request.indexOnConnection == 0 ? answer.disconnecting(afterBodyBytes: 4096) : answer
        }
        var body: [UInt8] = []
        var resumedFrom: [Int64] = []
        var restarts = 0
        for try await event in loader.stream(Request(url: "https://files.example.com/big.bin")) {
            switch event {
            case .chunk(let bytes): body += bytes
            case .resuming(_, let offset, _): resumedFrom.append(offset)
            case .retrying:
                restarts += 1
                body = []
            case .response, .finished: break
            }
        }
        #expect(body == file)
        #expect(resumedFrom == [4096])
        #expect(restarts == 0)
        #expect(transport.requests.map { $0.headers["range"] } == [nil, "bytes=4096-"])
        #expect(transport.requests.last?.headers["if-range"] == #""mock-1""#)
    }

    @Test func delaysChunksAndThrottlingSleepOnTheTransportsClock() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: .manual(clock), extraSchemes: ["memo"])
        #expect(transport.schemes == ["http", "https", "memo"])
        try transport.enqueue(.chunked(["ab", "", "cd"], delayBetweenChunks: .seconds(5)).delayed(by: .seconds(2)))
        try transport.enqueue(MockResponse(body: Array(repeating: 7, count: 40)).throttled(bytesPerSecond: 20))
        try transport.enqueue(.text("head only"))
        let url = try #require(HTTPURL(anyScheme: "memo://notes/7"))

        // The head waits 2 virtual seconds, the second chunk 5 more; no Content-Length for a chunked body.
        async let answered = transport.respond(to: ProtocolRequest(url: url))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let chunked = try await answered
        #expect(chunked.headers["content-length"] == nil)
        #expect(try await chunked.body.next() == Array("ab".utf8))
        async let second = chunked.body.next()
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        #expect(try await second == Array("cd".utf8))
        #expect(try await chunked.body.next() == nil)

        // 40 bytes at 20 per second: one byte per slice, 50 ms apart, 39 waits after the first; 1.95 s in all.
        let throttled = try await transport.respond(to: ProtocolRequest(url: url))
        #expect(throttled.headers["content-length"] == "40")
        let reading = Task {
            var bytes: [UInt8] = []
            while let chunk = try await throttled.body.next() { bytes += chunk }
            return bytes
        }
        for _ in 0..<39 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(50))
        }
        #expect(try await reading.value == Array(repeating: 7, count: 40))
        #expect(clock.elapsed == .seconds(7) + .milliseconds(1950))

        let head = try await transport.respond(to: ProtocolRequest(method: .head, url: url))
        #expect(head.headers["content-length"] == "9")
        #expect(try await head.body.next() == nil)
        #expect(transport.requests.map(\.host) == ["notes", "notes", "notes"])
        #expect(transport.requests.map(\.receivedAt).map { $0 - transport.requests[0].receivedAt } == [.zero, .seconds(7), .seconds(7) + .milliseconds(1950)])
    }

    /// A test waits for background loads' requests instead of polling; too few in time is a clear error.
    @Test func waitingForRequestsReturnsWhenTheyArriveAndTimesOutClearly() async throws {
        let (loader, transport, _) = try Self.service("version: 1\n")
        transport.on(.get, "*") { _ in .text("ok") }
        let loads = Task {
            for n in 0..<3 { _ = try await loader.load(Request(url: "https://api.example.com/n\(n)")) }
        }
        try await transport.waitForRequests(3)
        #expect(transport.requests.map(\.path) == ["/n0", "/n1", "/n2"])
        try await loads.value
        let error = await #expect(throws: MockServerError.self) { try await transport.waitForRequests(4, timeout: .milliseconds(20)) }
        #expect(error?.kind == .timedOut)
        #expect(error?.message == "ScriptedTransport saw 3 requests in 0.02 seconds, not the 4 waited for", "\(error?.message ?? "")")
    }

    @Test func badScriptsGetClearErrors() async throws {
        let transport = ScriptedTransport()
        let refused = #expect(throws: MockServerError.self) { try transport.enqueue(.status(99)) }
        #expect(refused?.kind == .invalidScript)
        #expect(refused?.description.contains("status 99") == true)
        #expect(throws: MockServerError.self) { try transport.enqueue(.text("x").throttled(bytesPerSecond: 0)) }
        #expect(throws: MockServerError.self) {
            try ScriptedTransport(maxScriptDelay: .seconds(1)).enqueue(.text("x").delayed(by: .seconds(2)))
        }

        let (loader, scripted, _) = try Self.service("version: 1\n")
        scripted.on(.get, "/broken") { _ in MockResponse(status: 700) }
        let broken = try await loader.load(Request(url: "https://api.example.com/broken"))
        let unscripted = try await loader.load(Request(url: "https://api.example.com/nothing"))
        #expect(broken.status == 500)
        #expect(String(decoding: broken.body, as: UTF8.self).contains("status 700 is not a final status"))
        #expect(unscripted.status == 404)
        #expect(scripted.problems.count == 2)
        #expect(scripted.problems.last?.contains("GET /nothing: no route and no queued response") == true)
    }
}
