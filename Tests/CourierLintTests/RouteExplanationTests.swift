import CourierCore
import CourierLint
import Foundation
import Testing

/// Explanations over a graph assembled from CourierCore values, so each origin and number is known exactly.
@Suite struct RouteExplanationTests {
    static func at(_ line: Int) -> CourierCore.SourceLocation { CourierCore.SourceLocation(file: "p.yaml", line: line, column: 5) }

    static let graph: PolicyGraph = {
        var retry = RetryPolicy.builtIn
        retry.maxAttempts = 5
        let webAPI = ServicePolicy(
            name: "web-api",
            hosts: [HostPattern(name: "api.example.com", isWildcard: false), HostPattern(name: "api.example.com", isWildcard: true)],
            authoriser: "main",
            rateLimit: RateLimitPolicy(
                perEndpoint: RateLimit(requestsPerSecond: 20, burst: 20),
                endpoints: ["/v1/search": RateLimit(requestsPerSecond: 2, burst: 1)]
            ),
            retry: retry,
            timeouts: TimeoutPolicy(connect: .seconds(5), idle: .seconds(30), total: .seconds(20)),
            fallbacks: ["api.example.com": [HostAddress(host: "api-backup.example.com"), HostAddress(host: "192.0.2.10", port: 8443)]],
            definedAt: at(20),
            origins: [
                "retry.max-attempts": at(27), "timeouts.total": at(28), "timeouts.connect": at(4),
                "rate-limit.requests-per-second": at(24), "rate-limit.endpoints./v1/search": at(25),
                "authoriser": at(23), "fallbacks.api.example.com": at(29),
            ]
        )
        let cdn = ServicePolicy(
            name: "images", hosts: [HostPattern(name: "images.example.com", isWildcard: true)], scheme: .http,
            cache: CachePolicy(ttl: .seconds(300), maxSize: 10 << 20), definedAt: at(40), origins: ["cache.ttl": at(43)]
        )
        let main = AuthoriserInstance(
            name: "main", plugin: "oauth2-refresh",
            settings: [
                "token-url": .string("https://accounts.example.com/api/token"),
                "client-id": .string(PolicyString(segments: [.secret(SecretReference(source: .env, name: "CLIENT_ID"))])),
                "client-secret": .string("s3cr3t-literal"),
            ],
            definedAt: at(10)
        )
        var defaults = PolicyDefaults.builtIn
        defaults.timeouts.connect = .seconds(5)
        defaults.origins = ["timeouts.connect": at(4)]
        return PolicyGraph(services: [webAPI, cdn], authorisers: ["main": main], defaults: defaults, files: ["p.yaml"])
    }()

    func explain(_ url: String, _ method: HTTPMethod = .get) throws -> RouteExplanation {
        RouteExplanation(graph: Self.graph, url: try #require(HTTPURL(url)), method: method)
    }

    @Test func exactHostWithEndpointOverride() throws {
        let e = try explain("https://api.example.com/v1/search?q=abba")
        #expect(e.service == "web-api")
        #expect(e.match == .exact)
        #expect(e.pattern == "api.example.com")
        #expect(e.reason.contains("exact"))
        #expect(e.endpointKey == "api.example.com/v1/search")
        #expect(e.value("rate-limit.endpoints./v1/search")?.value == "2 req/s, burst 1")
        #expect(e.value("rate-limit.endpoints./v1/search")?.origin.description == "p.yaml:25")
        #expect(e.value("retry.max-attempts")?.value == "5")
        #expect(e.value("retry.max-attempts")?.origin == .file(Self.at(27)))
        #expect(e.value("timeouts.total")?.value == "20s")
        #expect(e.value("timeouts.idle")?.origin == .builtInDefault)
        #expect(e.value("timeouts.idle")?.origin.description == "built-in default")
        #expect(e.value("fallbacks.api.example.com")?.value == "[api-backup.example.com, 192.0.2.10:8443]")
        #expect(e.value("fallbacks.api.example.com")?.origin.description == "p.yaml:29")
        // Worst case: 5 attempts, back-off 0.5+1+2+4 = 7.5s, but Retry-After up to 5 minutes is honoured for
        // 429/503, so the 20s total timeout is the bound. 2 req/s with a burst of 1 on the search endpoint.
        #expect(e.worstCase.attempts == 5)
        #expect(e.worstCase.waitBound == .totalTimeout)
        #expect(e.worstCase.longestWait == .seconds(20))
        #expect(e.worstCase.sustainedRequestsPerSecond == 2)
        #expect(e.worstCase.peakRequestsInOneSecond == 3)
    }

    @Test func serviceValuesFallBackToDefaultsOrigins() throws {
        let e = try explain("https://api.example.com/v2/me")
        // The service's own origins win; a key the service does not set takes the defaults' origin.
        #expect(e.value("timeouts.connect")?.origin.description == "p.yaml:4")
        #expect(e.endpointKey == "api.example.com/v2")
        #expect(e.value("rate-limit.requests-per-second")?.value == "20")
        #expect(e.worstCase.peakRequestsInOneSecond == 40)
    }

    @Test func secretsPrintAsReferencesAndLiteralSecretsAreHidden() throws {
        let e = try explain("https://api.example.com/")
        #expect(e.value("authoriser")?.value == "main (plugin oauth2-refresh)")
        #expect(e.value("authorisers.main.settings.client-id")?.value == "${env:CLIENT_ID}")
        #expect(e.value("authorisers.main.settings.token-url")?.value == "https://accounts.example.com/api/token")
        #expect(e.value("authorisers.main.settings.client-secret")?.value == "<hidden literal>")
        #expect(e.value("authorisers.main.timeout")?.value == "10s")
        #expect(e.value("authorisers.main.allow-plain-http")?.value == "false")
        let json = JSONOutput.encode(e)
        #expect(!json.contains("s3cr3t-literal"))
        #expect(json.contains("${env:CLIENT_ID}"))
    }

    @Test func wildcardMatchAndSchemeMismatchNote() throws {
        let e = try explain("https://eu.images.example.com/cover.jpg")
        #expect(e.service == "images")
        #expect(e.match == .wildcard)
        #expect(e.pattern == "*.images.example.com")
        #expect(e.reason.contains("wildcard"))
        #expect(e.value("cache.ttl")?.value == "5m")
        #expect(e.value("cache.ttl")?.origin.description == "p.yaml:43")
        #expect(e.value("cache.max-size")?.value == "10MiB")
        #expect(e.value("rate-limit")?.value == "unlimited")
        #expect(e.worstCase.rateLimit == nil)
        #expect(e.notes.contains { $0.contains("declared http") })
    }

    @Test func unclaimedHostGetsTheDefaults() throws {
        let e = try explain("https://example.org/x/y", .post)
        #expect(e.service == nil)
        #expect(e.match == .defaults)
        #expect(e.endpointKey == "example.org/x")
        #expect(e.value("timeouts.connect")?.origin.description == "p.yaml:4")
        #expect(e.value("authoriser") == nil)
        #expect(e.worstCase.attempts == 1, "POST is not retried by the built-in retry policy")
        #expect(e.worstCase.waitBound == .noRetries)
    }

    @Test func jsonHasTheDocumentedShape() throws {
        let e = try explain("https://api.example.com/v1/search")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONOutput.encode(e).utf8)) as? [String: Any]
        )
        #expect(object["service"] as? String == "web-api")
        #expect(object["endpointKey"] as? String == "api.example.com/v1/search")
        #expect(object["match"] as? String == "exact")
        let values = try #require(object["values"] as? [[String: Any]])
        #expect(values.contains { $0["key"] as? String == "retry.max-attempts" && $0["origin"] as? String == "p.yaml:27" })
        let worst = try #require(object["worstCase"] as? [String: Any])
        #expect(worst["attempts"] as? Int == 5)
        #expect(worst["waitBound"] as? String == "timeouts.total")
        #expect((worst["longestWait"] as? [String: Any])?["seconds"] as? Double == 20)
        #expect((worst["rateLimit"] as? [String: Any])?["requestsPerSecond"] as? Double == 2)
        let unlimited = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONOutput.encode(try explain("https://example.org/")).utf8))
                as? [String: Any]
        )
        #expect((unlimited["worstCase"] as? [String: Any])?["rateLimit"] is NSNull)
    }
}
