import CourierCore
import CourierPolicy
import Testing

/// Route look-ups through compiled graphs (precedence is PolicyGraph's; these check the compiler feeds it).
@Suite struct RouteTests {
    let yaml = """
    version: 1
    defaults:
      rate-limit: { requests-per-second: 10 }
      retry: { max-attempts: 2 }
    authorisers:
      token: { plugin: static-bearer, settings: { token: "${env:TOKEN}" } }
    services:
      wide:
        hosts: ["*.example.com"]
      narrow:
        hosts: ["*.api.example.com"]
        retry: { max-attempts: 4 }
      exact:
        hosts: [eu.api.example.com, "[::1]", 192.0.2.1]
        authoriser: token
        rate-limit:
          requests-per-second: 50
          endpoints: { /v1/search: { requests-per-second: 2, burst: 3 } }
        fallbacks: { eu.api.example.com: ["backup.example.net:8443", "[2001:db8::1]"] }
    """

    @Test func precedenceExactThenLongestWildcardThenDefaults() throws {
        let result = compile(yaml)
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        let graph = try #require(result.graph)
        func name(_ url: String) -> String? { graph.route(for: url)?.service?.name }
        #expect(name("https://eu.api.example.com/") == "exact")
        #expect(name("https://EU.API.EXAMPLE.COM/") == "exact")
        #expect(name("https://us.api.example.com/") == "narrow")
        #expect(name("https://a.b.api.example.com/") == "narrow")
        #expect(name("https://img.example.com/") == "wide")
        #expect(name("https://example.com/") == nil)
        #expect(name("http://[::1]:8080/") == "exact")
        #expect(name("http://192.0.2.1/") == "exact")
        let unclaimed = try #require(graph.route(for: "https://other.org/v2/x"))
        #expect(unclaimed.match == .defaults)
        #expect(unclaimed.retry.maxAttempts == 2)
        #expect(unclaimed.rateLimit == RateLimit(requestsPerSecond: 10, burst: 10))
        #expect(unclaimed.endpointKey == "other.org/v2")
    }

    @Test func routeCarriesTheMergedValues() throws {
        let graph = try #require(compile(yaml).graph)
        let search = try #require(graph.route(for: "https://eu.api.example.com/v1/search/x?q=1", method: .post))
        #expect(search.match == .exact(HostPattern(name: "eu.api.example.com", isWildcard: false)))
        #expect(search.endpointKey == "eu.api.example.com/v1/search")
        #expect(search.rateLimit == RateLimit(requestsPerSecond: 2, burst: 3))
        #expect(search.retriesAllowed == false, "POST is not idempotent")
        #expect(search.authoriser?.plugin == "static-bearer")
        #expect(search.fallbacks == [HostAddress(host: "backup.example.net", port: 8443), HostAddress(host: "2001:db8::1")])
        let tracks = try #require(graph.route(for: "https://eu.api.example.com/v1/tracks"))
        #expect(tracks.rateLimit == RateLimit(requestsPerSecond: 50, burst: 50))
        #expect(tracks.retriesAllowed)
        let narrow = try #require(graph.route(for: "https://us.api.example.com/"))
        #expect(narrow.retry.maxAttempts == 4)
        #expect(narrow.match == .wildcard(HostPattern(name: "api.example.com", isWildcard: true)))
        #expect(narrow.fallbacks == [])
        #expect(narrow.authoriser == nil)
    }

    @Test func reloadingBuildsAnIndependentGraph() throws {
        let old = try #require(compile(yaml).graph)
        let new = try #require(compile(yaml.replacingFirst("max-attempts: 4", with: "max-attempts: 5")).graph)
        #expect(old.route(for: "https://us.api.example.com/")?.retry.maxAttempts == 4)
        #expect(new.route(for: "https://us.api.example.com/")?.retry.maxAttempts == 5)
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let start = firstRange(of: target) else { return self }
        return String(self[..<start.lowerBound]) + replacement + String(self[start.upperBound...])
    }

    func firstRange(of target: String) -> Range<String.Index>? {
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(target) { return i..<index(i, offsetBy: target.count) }
            i = index(after: i)
        }
        return nil
    }
}
