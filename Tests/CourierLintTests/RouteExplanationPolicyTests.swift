import CourierCore
import CourierLint
import CourierPolicy
import Testing

/// `courier explain`'s logic on a real compiled policy (Fixtures/explain), every number worked out by hand.
@Suite struct RouteExplanationPolicyTests {
    static let policy = Fixtures.path("explain/explain.yaml")
    static let common = Fixtures.path("explain/common.yaml")

    func explain(_ url: String, _ method: HTTPMethod = .get) throws -> RouteExplanation {
        let compilation = PolicyCompiler().compile(file: Self.policy)
        #expect(compilation.diagnostics.isEmpty)
        let graph = try #require(compilation.graph)
        return RouteExplanation(graph: graph, url: try #require(HTTPURL(url)), method: method)
    }

    func ms(_ d: Duration) -> Int { Int((d.seconds * 1000).rounded()) }

    func origin(_ file: String, _ line: Int) -> String { "\(file):\(line)" }

    @Test func endpointOverrideWithOriginsAcrossIncludes() throws {
        let e = try explain("https://accounts.example.com/v1/login/now")
        #expect(e.service == "accounts")
        #expect(e.match == .exact)
        #expect(e.endpointKey == "accounts.example.com/v1/login")
        // Values set in the service, in the included defaults, and nowhere.
        #expect(e.value("timeouts.total")?.value == "3s")
        #expect(e.value("timeouts.total")?.origin.description == origin(Self.policy, 14))
        #expect(e.value("timeouts.idle")?.value == "20s")
        #expect(e.value("timeouts.idle")?.origin.description == origin(Self.common, 4))
        #expect(e.value("retry.max-attempts")?.value == "4")
        #expect(e.value("retry.max-attempts")?.origin.description == origin(Self.policy, 13))
        #expect(e.value("retry.backoff.multiplier")?.value == "3")
        #expect(e.value("retry.backoff.multiplier")?.origin.description == origin(Self.common, 8))
        #expect(e.value("retry.methods")?.origin == .builtInDefault)
        #expect(e.value("rate-limit.endpoints./v1/login")?.value == "0.5 req/s, burst 1")
        #expect(e.value("authorisers.accounts-key.settings.key")?.value == "${env:ACCOUNTS_KEY}")
        #expect(e.value("fallbacks.accounts.example.com")?.value == "[accounts-backup.example.com]")

        // 4 attempts. Equal jitter, so the worst delay is the base: 200ms, 600ms, 1.8s (×3, under the 2s cap).
        // Retry-After (503 is retried) may stretch each to 1s: 1s + 1s + 1.8s = 3.8s > total 3s.
        let w = e.worstCase
        #expect(w.attempts == 4)
        // (The curve is computed in floating point, so compare to the millisecond.)
        #expect(w.backoffDelays.map(ms) == [200, 600, 1800])
        #expect(w.delays.map(ms) == [1000, 1000, 1800])
        #expect(ms(w.unboundedWait) == 3800)
        #expect(w.longestWait == .seconds(3))
        #expect(w.waitBound == .totalTimeout)
        #expect(w.sustainedRequestsPerSecond == 0.5)
        #expect(w.peakRequestsInOneSecond == 1.5)
    }

    @Test func wildcardHostUsesTheServiceLimit() throws {
        let e = try explain("https://eu.accounts.example.com/v2/me")
        #expect(e.match == .wildcard)
        #expect(e.pattern == "*.accounts.example.com")
        #expect(e.endpointKey == "eu.accounts.example.com/v2")
        #expect(e.value("rate-limit.requests-per-second")?.value == "2")
        #expect(e.value("rate-limit.burst")?.value == "4")
        #expect(e.value("fallbacks.eu.accounts.example.com")?.value == "none")
        #expect(e.worstCase.peakRequestsInOneSecond == 6)
    }

    @Test func nonRetryableMethodAndSingleAttemptService() throws {
        let post = try explain("https://accounts.example.com/v1/login", .post)
        #expect(post.worstCase.attempts == 1)
        #expect(post.worstCase.waitBound == .noRetries)
        let images = try explain("https://a.images.example.com/x.jpg")
        #expect(images.service == "images")
        #expect(images.worstCase.attempts == 1)
        #expect(images.worstCase.retryReason.contains("max-attempts is 1"))
    }

    @Test func unclaimedHostUsesTheIncludedDefaults() throws {
        let e = try explain("https://unknown.example.org/")
        #expect(e.service == nil)
        #expect(e.match == .defaults)
        // GET: 3 attempts; the 1s Retry-After cap outweighs 200ms and 600ms: 1s + 1s = 2s, within 30s.
        #expect(e.worstCase.attempts == 3)
        #expect(e.worstCase.longestWait == .seconds(2))
        #expect(e.worstCase.waitBound == .retryAfterCap)
        #expect(e.worstCase.sustainedRequestsPerSecond == 5)
        #expect(e.worstCase.peakRequestsInOneSecond == 10)
        #expect(e.value("rate-limit.requests-per-second")?.origin.description == origin(Self.common, 11))
    }
}
