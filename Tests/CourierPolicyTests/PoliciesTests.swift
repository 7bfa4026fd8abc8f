import CourierCore
import CourierPolicy
import Testing

/// The example policies in policies/ compile with no diagnostic at all, and decide what they say they do.
@Suite struct PoliciesTests {
    @Test(arguments: ["music-streaming.yaml", "minimal.yaml", "common.yaml", "fleet.yaml"])
    func policyIsClean(_ name: String) throws {
        let result = PolicyCompiler().compile(file: Fixtures.policies + "/" + name)
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description).joined(separator: "\n"))")
        #expect(result.graph != nil)
    }

    @Test func musicStreamingRoutes() throws {
        let result = PolicyCompiler().compile(file: Fixtures.policies + "/music-streaming.yaml")
        let graph = try #require(result.graph)
        #expect(result.files.map { String($0.split(separator: "/").last!) } == ["music-streaming.yaml", "common.yaml"])

        let search = try #require(graph.route(for: "https://api.example.com/v1/search?q=abba"))
        #expect(search.service?.name == "web-api")
        #expect(search.rateLimit == RateLimit(requestsPerSecond: 2, burst: 4))
        #expect(search.authoriser?.name == "user-oauth")
        #expect(search.fallbacks == [HostAddress(host: "api-backup.example.com")])
        #expect(search.retry.maxAttempts == 4)
        #expect(search.retry.backoff.max == .seconds(30), "inherited from common.yaml")
        #expect(search.timeouts.total == .seconds(30))
        #expect(search.timeouts.connect == .seconds(5))
        let post = try #require(graph.route(for: "https://eu.api.example.com/v1/playlists", method: .post))
        #expect(post.retriesAllowed, "POST with an idempotency key")
        #expect(post.fallbacks == [], "fallbacks are per exact host")

        let image = try #require(graph.route(for: "https://i.images.example.com/ab/cd.jpg"))
        #expect(image.service?.name == "image-cdn")
        #expect(image.cache == CachePolicy(ttl: .seconds(86_400), maxSize: 256 << 20))
        #expect(image.authoriser == nil)

        let token = try #require(graph.route(for: "https://accounts.example.com/api/token", method: .post))
        #expect(token.endpointKey == "accounts.example.com/api/token")
        #expect(token.rateLimit == RateLimit(requestsPerSecond: 1, burst: 3))
        #expect(token.fallbacks.map(\.description) == ["accounts-backup.example.com", "192.0.2.10:443"])
        #expect(token.tls.minVersion == .tls13)
        #expect(token.retriesAllowed == false)

        // Secrets stay references in the graph.
        let oauth = try #require(graph.authorisers["user-oauth"])
        #expect(oauth.settings["refresh-token"]?.description == "${env:MUSIC_REFRESH_TOKEN}")
        #expect(graph.defaults.origins["retry.budget.ratio"]?.file.hasSuffix("common.yaml") == true)
    }

    @Test func fleetSharesItsPartnerLimitAndTokens() throws {
        let graph = try #require(PolicyCompiler().compile(file: Fixtures.policies + "/fleet.yaml").graph)
        let coordination = try #require(graph.coordination)
        #expect(coordination.redis.endpoint.description == "redis://127.0.0.1:6379/0")
        #expect(coordination.redis.keyPrefix == "courier:orders:")
        #expect(coordination.redis.tokenKey?.description == "${env:COURIER_TOKEN_KEY}")
        #expect(coordination.onUnavailable == .local)
        let orders = try #require(graph.route(for: "https://partner.example.com/v2/orders"))
        #expect(orders.rateLimit == RateLimit(requestsPerSecond: 20, burst: 20, scope: .fleet))
        #expect(orders.authoriser?.shareTokens == true)
        #expect(graph.route(for: "https://partner.example.com/v2/reports/7")?.rateLimit?.scope == .fleet)
        #expect(graph.route(for: "https://partner.example.com/v2/health")?.rateLimit?.scope == .process)
    }

    @Test func minimalUsesBuiltInDefaults() throws {
        let graph = try #require(PolicyCompiler().compile(file: Fixtures.policies + "/minimal.yaml").graph)
        let route = try #require(graph.route(for: "https://api.example.com/"))
        #expect(route.retry == RetryPolicy.builtIn)
        #expect(route.timeouts == TimeoutPolicy.builtIn)
        #expect(route.rateLimit == nil)
        #expect(route.service?.origins.isEmpty == true)
    }

    /// A file that uses every key of every table compiles without a diagnostic, so no key in the tables (and in
    /// the schema) lacks a compiler branch.
    @Test func everyKeyOfTheLanguageIsHandled() throws {
        let yaml = """
        version: 1
        include: [includes/common.yaml]
        defaults:
          timeouts: { connect: 1s, idle: 2s, total: 1m }
          retry:
            max-attempts: 2
            on: [connect-error, timeout, connection-lost, 503]
            methods: [GET]
            backoff: { initial: 100ms, max: 1s, multiplier: 1.5, jitter: decorrelated }
            respect-retry-after: false
            retry-after-cap: 1m
            budget: { ratio: 0.5, min-per-second: 1 }
            idempotency-key: X-Idempotency-Key
          rate-limit: { requests-per-second: 3, burst: 4, scope: fleet, endpoints: { /a: { requests-per-second: 1, burst: 1, scope: process } } }
          propagate-trace-context: false
        coordination:
          redis:
            url: "rediss://redis.example.com:6380/1"
            username: "${env:REDIS_USER}"
            password: "${env:REDIS_PASSWORD}"
            key-prefix: "courier:test:"
            timeout: 20ms
            token-key: "${env:COURIER_TOKEN_KEY}"
            tls: { min-version: "1.3" }
          on-unavailable: closed
        authorisers:
          auth:
            plugin: api-key
            settings: { key: "${env:KEY}", query-item: key }
            timeout: 2s
            allow-plain-http: true
            share-tokens: false
        services:
          svc:
            hosts: [svc.example.com]
            scheme: http
            authoriser: auth
            rate-limit: off
            retry: { budget: off }
            timeouts: { total: 2m }
            fallbacks: { svc.example.com: [backup.example.com] }
            cache: { ttl: 1m, max-size: 1MiB }
            propagate-trace-context: true
            proxy:
              url: "http://proxy.internal:3128"
              username: "${env:PROXY_USER}"
              password: "${env:PROXY_PASSWORD}"
              no-proxy: [.internal, 10.0.0.0/8]
              ca-file: certs/ca.pem
          secure:
            hosts: [secure.example.com]
            tls:
              pins: ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="]
              ca-file: certs/ca.pem
              min-version: "1.3"
              client-certificate: certs/ca.pem
              client-key: certs/ca.pem
              client-key-password: "${env:KEY_PASSWORD}"
          socket:
            hosts: [socket.example]
            scheme: http
            connect-to: unix:/run/socket.sock
        """
        let result = compile(yaml)
        // The stand-in key file is as readable as the checkout made it (git keeps no such mode): that warning aside.
        let diagnostics = result.diagnostics.filter { $0.rule != "client-key-readable" }
        #expect(diagnostics == [], "\(diagnostics.map(\.description).joined(separator: "\n"))")
        var seen: Set<String> = []
        for line in yaml.split(separator: "\n") {
            for token in line.split(whereSeparator: { " {},[]".contains($0) }) where token.hasSuffix(":") {
                seen.insert(String(token.dropLast()))
            }
        }
        let languageKeys = try SchemaTests.languageKeys()
        #expect(languageKeys.count > 40)
        for key in languageKeys { #expect(seen.contains(key), "key '\(key)' of the language is not exercised") }
    }
}
