import CourierCore
import CourierPolicy
import Testing

@Suite struct CompilerSmokeTests {
    @Test func issueExampleCompiles() throws {
        let result = PolicyCompiler().compile(file: Fixtures.path("issue-example.yaml"))
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        let graph = try #require(result.graph)
        let route = try #require(graph.route(for: "https://api.example.com/v1/search?q=x"))
        #expect(route.service?.name == "web-api")
        #expect(route.rateLimit == RateLimit(requestsPerSecond: 2, burst: 2))
        #expect(route.retry.maxAttempts == 5)
        #expect(route.timeouts == TimeoutPolicy(connect: .seconds(5), idle: .seconds(30), total: .seconds(20)))
        #expect(route.fallbacks.map(\.description) == ["api-backup.example.com", "192.0.2.10"])
        #expect(route.authoriser?.plugin == "oauth2-refresh")
        #expect(route.cache == CachePolicy(ttl: .seconds(300), maxSize: 10 << 20))
    }
}
