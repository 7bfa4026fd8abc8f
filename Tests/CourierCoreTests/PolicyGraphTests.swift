import CourierCore
import Testing

@Suite struct PolicyGraphTests {
    let here = SourceLocation(file: "t.yaml", line: 1, column: 1)

    func pattern(_ s: String) -> HostPattern { try! HostPattern.parse(s).get() }

    @Test func exactBeatsWildcardAndLongestWildcardWins() throws {
        let graph = PolicyGraph(services: [
            ServicePolicy(name: "wide", hosts: [pattern("*.example.com")], definedAt: here),
            ServicePolicy(name: "narrow", hosts: [pattern("*.api.example.com")], definedAt: here),
            ServicePolicy(name: "exact", hosts: [pattern("eu.api.example.com")], definedAt: here),
        ])
        #expect(graph.route(for: "https://eu.api.example.com/")?.service?.name == "exact")
        #expect(graph.route(for: "https://us.api.example.com/")?.service?.name == "narrow")
        #expect(graph.route(for: "https://deep.us.api.example.com/")?.service?.name == "narrow")
        #expect(graph.route(for: "https://img.example.com/")?.service?.name == "wide")
        // A wildcard never covers its own apex.
        #expect(graph.route(for: "https://example.com/")?.service == nil)
        #expect(graph.route(for: "https://example.com/")?.match == .defaults)
    }

    @Test func endpointKeysAndOverrides() throws {
        let service = ServicePolicy(
            name: "api", hosts: [pattern("api.example.com")],
            rateLimit: RateLimitPolicy(
                perEndpoint: RateLimit(requestsPerSecond: 20, burst: 20),
                endpoints: ["/v1/search": RateLimit(requestsPerSecond: 2, burst: 1)]
            ),
            definedAt: here
        )
        let graph = PolicyGraph(services: [service])
        let plain = try #require(graph.route(for: "https://api.example.com/v1/tracks/1"))
        #expect(plain.endpointKey == "api.example.com/v1")
        #expect(plain.rateLimit?.requestsPerSecond == 20)
        let search = try #require(graph.route(for: "https://api.example.com/v1/search/more?q=1"))
        #expect(search.endpointKey == "api.example.com/v1/search")
        #expect(search.rateLimit?.requestsPerSecond == 2)
        // Prefixes match on segment boundaries only.
        let searchy = try #require(graph.route(for: "https://api.example.com/v1/searchy"))
        #expect(searchy.endpointKey == "api.example.com/v1")
    }

    @Test func retriesFollowMethodIdempotency() throws {
        let graph = PolicyGraph(services: [ServicePolicy(name: "a", hosts: [pattern("a.example.com")], definedAt: here)])
        #expect(graph.route(for: "https://a.example.com/", method: .get)?.retriesAllowed == true)
        #expect(graph.route(for: "https://a.example.com/", method: .post)?.retriesAllowed == false)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("0.0.0.0", true), ("255.255.255.255", true), ("010.001.0.9", true),
        ("256.0.0.1", false), ("1.2.3", false), ("1.2.3.4.", false), (".1.2.3", false), ("1..2.3", false),
        ("1.2.3.4.5", false), ("1234.1.1.1", false), ("1.2.3.a", false), ("1.2.3.٣", false), ("", false),
        ("localhost", false), ("example.com", false), ("::1", true), ("fe80::1:2", true), ("1:2", false),
        ("::ffff:10.0.0.1", true),
    ])
    func ipLiteralsAreDottedQuadsAndIPv6Addresses(_ host: String, _ isLiteral: Bool) {
        #expect(HostPattern.isIPLiteral(host) == isLiteral)
    }

    @Test(arguments: ["", "*.com", "a..b", "-a.com", "a*.example.com", "*.*.example.com", "exa mple.com", "*.1.2.3.4"])
    func malformedHostPatterns(_ text: String) {
        #expect(throws: HostPatternError.self) { try HostPattern.parse(text).get() }
    }

    @Test func durationsAndSizes() {
        #expect(DurationFormat.parse("250ms") == .milliseconds(250))
        #expect(DurationFormat.parse("5s") == .seconds(5))
        #expect(DurationFormat.parse("2m") == .seconds(120))
        #expect(DurationFormat.parse("1h30m") == .seconds(5400))
        #expect(DurationFormat.parse("1.5s") == .milliseconds(1500))
        for bad in ["", "5", "s", "-1s", "5 s", "30m1h", "1s1s", "5x", ".5s", "1e3s"] {
            #expect(DurationFormat.parse(bad) == nil, "\(bad)")
        }
        #expect(DurationFormat.format(.milliseconds(250)) == "250ms")
        #expect(DurationFormat.format(.seconds(90)) == "1m30s")
        #expect(DurationFormat.format(.milliseconds(1500)) == "1.5s")
        #expect(DurationFormat.parseSize("10MiB") == 10 << 20)
        #expect(DurationFormat.parseSize("512KiB") == 512 << 10)
        #expect(DurationFormat.parseSize("1GiB") == 1 << 30)
        #expect(DurationFormat.parseSize("10 MiB") == nil)
        #expect(DurationFormat.parseSize("10XB") == nil)
        #expect(DurationFormat.formatSize(10 << 20) == "10MiB")
    }

    @Test func backoffCurve() {
        let b = BackoffPolicy(initial: .milliseconds(500), max: .seconds(30), multiplier: 2, jitter: .full)
        #expect(b.baseDelay(beforeRetry: 1) == .milliseconds(500))
        #expect(b.baseDelay(beforeRetry: 3) == .seconds(2))
        #expect(b.baseDelay(beforeRetry: 20) == .seconds(30))
        let r = RetryPolicy.builtIn
        #expect(r.worstCaseBackoff == .milliseconds(1500))
    }

    @Test func base64RoundTrip() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("hello".utf8)) == "aGVsbG8=")
        #expect(Base64.decode("aGVsbG8") == nil)
        #expect(Base64.decode("aGV=bG8=") == nil)
    }
}
