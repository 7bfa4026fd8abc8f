import CourierCore
import CourierPolicy
import CourierTestSupport
import Testing

@Suite struct IncludeAndMergeTests {
    @Test func nestedIncludesResolveRelativeToTheIncludingFile() throws {
        let root = Fixtures.path("includes/nested-root.yaml")
        let result = PolicyCompiler().compile(file: root)
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        #expect(result.files == [root, Fixtures.path("includes/nested/mid.yaml"), Fixtures.path("includes/nested/deeper/leaf.yaml")])
        let graph = try #require(result.graph)
        #expect(graph.files == result.files)
        // Services in merge order: includes first, depth first.
        #expect(graph.services.map(\.name) == ["leaf-svc", "mid-svc", "root-svc"])
        // Defaults: built-in <- leaf <- mid <- root, key by key.
        let d = graph.defaults
        #expect(d.timeouts == TimeoutPolicy(connect: .seconds(3), idle: .seconds(30), total: .seconds(45)))
        #expect(d.retry.maxAttempts == 4)
        #expect(d.retry.backoff.initial == .seconds(1))
        #expect(d.retry.backoff.max == .seconds(30))
        #expect(d.rateLimit.perEndpoint == RateLimit(requestsPerSecond: 5, burst: 5))
        // Origins name the file and line each value came from.
        #expect(d.origins["timeouts.connect"] == SourceLocation(file: Fixtures.path("includes/nested/deeper/leaf.yaml"), line: 3, column: 24))
        #expect(d.origins["timeouts.total"]?.file == Fixtures.path("includes/nested/mid.yaml"))
        #expect(d.origins["retry.max-attempts"]?.file == root)
        #expect(d.origins["timeouts.idle"] == nil, "absent = built-in default")
        // A service's own keys merge over the defaults; burst over an inherited rate.
        let leaf = try #require(graph.service(named: "leaf-svc"))
        #expect(leaf.rateLimit.perEndpoint == RateLimit(requestsPerSecond: 5, burst: 9))
        #expect(leaf.origins["rate-limit.burst"]?.file == Fixtures.path("includes/nested/deeper/leaf.yaml"))
        #expect(leaf.origins["rate-limit.burst"]?.line == 8)
        // ca-file is relative to the file that says it, stored absolute.
        let mid = try #require(graph.service(named: "mid-svc"))
        #expect(mid.tls.caFile == Fixtures.path("certs/ca.pem"))
    }

    @Test func diamondIncludesAreReadOnceAndMergedInIncludeOrder() throws {
        let result = PolicyCompiler().compile(file: Fixtures.path("includes/diamond-root.yaml"))
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        #expect(result.files.map { String($0.split(separator: "/").last!) }
            == ["diamond-root.yaml", "diamond-left.yaml", "diamond-base.yaml", "diamond-right.yaml"])
        let graph = try #require(result.graph)
        #expect(graph.services.map(\.name) == ["base", "left", "right", "top"])
        // base (9) <- left (5) <- right (2): the later include wins.
        #expect(graph.defaults.retry.maxAttempts == 2)
        #expect(graph.defaults.origins["retry.max-attempts"]?.file.hasSuffix("diamond-right.yaml") == true)
        #expect(graph.defaults.retry.respectRetryAfter == false)
    }

    @Test func cycleIsReportedAtTheIncludeEntryAndNamesTheChain() throws {
        let result = PolicyCompiler().compile(file: Fixtures.path("rules/include-cycle.yaml"))
        let cycles = result.rules("include-cycle")
        #expect(cycles.count == 2)
        #expect(cycles.contains { $0.message.contains("include-cycle.yaml → cycle-b.yaml → cycle-c.yaml → include-cycle.yaml") })
        #expect(cycles.contains { $0.message.contains("cycle-c.yaml → cycle-c.yaml") })
        #expect(result.graph == nil)
    }

    @Test func tooManyIncludes() throws {
        let result = PolicyCompiler(limits: PolicyLimits(maxIncludes: 2)).compile(file: Fixtures.path("includes/nested-root.yaml"))
        #expect(result.diagnostics.map(\.rule) == ["too-many-includes"])
        #expect(result.diagnostics.first?.location.file == Fixtures.path("includes/nested/mid.yaml"))
        #expect(result.diagnostics.first?.location.line == 2)
        #expect(result.files.count == 2)
    }

    @Test func sourceCompilationReadsIncludesFromDisk() throws {
        let yaml = "version: 1\ninclude: includes/common.yaml\nservices:\n  s: { hosts: [s.example.com] }\n"
        let result = compile(yaml)
        #expect(result.diagnostics == [])
        #expect(result.files == [Fixtures.path("inline.yaml"), Fixtures.path("includes/common.yaml")])
        #expect(result.graph?.defaults.timeouts.connect == .seconds(4))
    }

    @Test func relativeRootPathsStayRelativeInDiagnostics() throws {
        let dir = try makeTemporaryDirectory()
        try makeDirectory(dir + "/sub")
        try writeFile(dir + "/sub/root.yaml", "version: 1\ninclude: [inc.yaml]\n")
        try writeFile(dir + "/sub/inc.yaml", "version: 1\nbogus: 1\n")
        guard chdir(dir) == 0 else { Issue.record("chdir failed"); return }
        let result = PolicyCompiler().compile(file: "sub/root.yaml")
        #expect(result.files == ["sub/root.yaml", "sub/inc.yaml"])
        #expect(result.diagnostics.map(\.description) == ["sub/inc.yaml:2:1: error: unknown key 'bogus' in the policy [unknown-key]"])
    }

    @Test func serviceKeysMergeKeyByKeyAndListsReplace() throws {
        let yaml = """
        version: 1
        defaults:
          retry:
            max-attempts: 4
            on: [connect-error, 503]
            backoff: { initial: 200ms, max: 10s, jitter: equal }
            budget: { ratio: 0.1, min-per-second: 5 }
          rate-limit: { requests-per-second: 10, burst: 20, endpoints: { /v1/search: { requests-per-second: 1 } } }
        services:
          a:
            hosts: [a.example.com]
            retry:
              on: [429]
              backoff: { max: 5s }
              budget: { ratio: 0.3 }
            rate-limit: { requests-per-second: 3.5 }
          b:
            hosts: [b.example.com]
            retry: { budget: off }
            rate-limit: off
            cache: { ttl: 1m }
        """
        let result = compile(yaml)
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        let graph = try #require(result.graph)
        let a = try #require(graph.service(named: "a"))
        #expect(a.retry.maxAttempts == 4)
        #expect(a.retry.conditions == [.status(429)], "lists replace, they do not append")
        #expect(a.retry.backoff == BackoffPolicy(initial: .milliseconds(200), max: .seconds(5), multiplier: 2, jitter: .equal))
        #expect(a.retry.budget == RetryPolicy.Budget(ratio: 0.3, minPerSecond: 5))
        #expect(a.rateLimit.perEndpoint == RateLimit(requestsPerSecond: 3.5, burst: 20), "burst merged from defaults")
        #expect(a.rateLimit.endpoints == ["/v1/search": RateLimit(requestsPerSecond: 1, burst: 1)])
        #expect(a.origins["retry.on"]?.line == 13)
        #expect(a.origins["retry.max-attempts"]?.line == 4)
        #expect(a.origins["retry.backoff.max"]?.line == 14)
        #expect(a.origins["retry.backoff.initial"]?.line == 6)
        #expect(a.origins["rate-limit.endpoints./v1/search"]?.line == 8)
        #expect(a.cache == nil)
        let b = try #require(graph.service(named: "b"))
        #expect(b.retry.budget == nil)
        #expect(b.rateLimit == .unlimited, "off drops inherited limits and endpoints")
        #expect(b.cache == CachePolicy(ttl: .seconds(60), maxSize: 10 << 20))
        #expect(b.origins["cache.ttl"]?.line == 21)
    }

    @Test func authoriserInstancesCarrySecretsAsReferences() throws {
        let yaml = """
        version: 1
        authorisers:
          main:
            plugin: oauth2-refresh
            timeout: 3s
            settings:
              token-url: "https://accounts.example.com/api/token"
              client-id: "${env:CLIENT_ID}"
              refresh-token: "${file:secrets/refresh}"
              scope: "read $${literal} ${env:SCOPE_SUFFIX}"
              refresh-before: 2m
        services:
          web: { hosts: [api.example.com], authoriser: main }
        """
        let result = compile(yaml)
        #expect(result.diagnostics == [], "\(result.diagnostics.map(\.description))")
        let main = try #require(result.graph?.authorisers["main"])
        #expect(main.timeout == .seconds(3))
        #expect(main.allowPlainHTTP == false)
        #expect(main.settings["client-id"] == .string(PolicyString(segments: [.secret(SecretReference(source: .env, name: "CLIENT_ID"))])))
        #expect(main.settings["refresh-token"] == .string(PolicyString(segments: [.secret(SecretReference(source: .file, name: Fixtures.path("secrets/refresh")))])))
        #expect(main.settings["scope"]?.description == "read ${literal} ${env:SCOPE_SUFFIX}")
        #expect(main.settings["refresh-before"] == .duration(.seconds(120)))
        #expect(main.definedAt.line == 3)
        let route = try #require(result.graph?.route(for: "https://api.example.com/x"))
        #expect(route.authoriser?.name == "main")
    }

    @Test func customPluginTypesFromTheRegistryAreChecked() throws {
        let registry = AuthoriserRegistry.builtIn.registering(AuthoriserTypeDescriptor(
            type: "acme-sso", summary: "test", settings: [.init("realm", .string, required: true, "realm")]))
        let yaml = """
        version: 1
        authorisers:
          sso: { plugin: acme-sso, settings: { realm: music, realn: x } }
        services:
          web: { hosts: [api.example.com], authoriser: sso }
        """
        let result = PolicyCompiler(registry: registry).compile(source: yaml, path: Fixtures.path("custom.yaml"))
        #expect(result.summary == ["unknown-setting@3"])
        #expect(result.diagnostics.first?.suggestion == "did you mean 'realm'?")
        let builtInOnly = PolicyCompiler().compile(source: yaml, path: Fixtures.path("custom.yaml"))
        #expect(builtInOnly.summary == ["unknown-plugin@3"])
    }
}

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ConcurrencyTests {
    /// A compiler is a Sendable value: many compilations at once give identical answers.
    @Test func concurrentCompilationsAgree() async throws {
        let compiler = PolicyCompiler()
        let path = Fixtures.policies + "/music-streaming.yaml"
        let summaries = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<16 {
                group.addTask {
                    await offThePool {
                        let result = compiler.compile(file: path)
                        return result.graph?.services.map { "\($0.name):\($0.retry.maxAttempts):\($0.origins.count)" } ?? []
                    }
                }
            }
            var all: [[String]] = []
            for await s in group { all.append(s) }
            return all
        }
        #expect(summaries.count == 16)
        #expect(Set(summaries.map { $0.joined(separator: ",") }).count == 1)
        #expect(summaries.first?.isEmpty == false)
    }

    @Test func includingADirectoryIsReported() {
        let result = compile("version: 1\ninclude: includes\n")
        #expect(result.summary == ["include-missing@2"])
        #expect(result.diagnostics.first?.message.contains("not a regular file") == true)
    }
}

@Suite struct AliasTests {
    @Test func anchorsAndAliasesWorkAndOriginsPointAtTheAnchor() throws {
        let yaml = """
        version: 1
        services:
          a:
            hosts: [a.example.com]
            retry: &careful { max-attempts: 5, backoff: { initial: 1s } }
          b:
            hosts: [b.example.com]
            retry: *careful
        """
        let result = compile(yaml)
        #expect(result.diagnostics == [])
        let b = try #require(result.graph?.service(named: "b"))
        #expect(b.retry.maxAttempts == 5)
        #expect(b.origins["retry.max-attempts"]?.line == 5)
    }

    @Test func anAliasedDuplicateIsReportedOnce() {
        let yaml = """
        version: 1
        defaults:
          timeouts: &t { connect: 1s, connect: 2s }
        services:
          a: { hosts: [a.example.com], timeouts: *t }
        """
        #expect(compile(yaml).summary == ["duplicate-key@3"])
    }
}

extension AliasTests {
    @Test func aBadAliasedValueIsReportedOnce() {
        let yaml = """
        version: 1
        services:
          a: { hosts: [a.example.com], retry: &r { max-attempts: 0 } }
          b: { hosts: [b.example.com], retry: *r }
          c: { hosts: [c.example.com], retry: *r }
        """
        #expect(compile(yaml).summary == ["invalid-max-attempts@3"])
    }
}
