import CourierCore
import CourierPolicy
import Testing

/// `rate-limit.scope` merged key by key (defaults, then the service, then an endpoint override), `share-tokens`
/// on authorisers, and the rules that tie both to a `coordination:` section.
@Suite struct FleetPolicyTests {
    static let coordination = """
        coordination:
          redis: { url: "redis://127.0.0.1:6379/0", token-key: "${env:COURIER_TOKEN_KEY}" }
        """

    private func graph(_ yaml: String) throws -> PolicyGraph {
        let result = compile(yaml)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.description).joined(separator: "\n"))")
        return try #require(result.graph)
    }

    private func limit(_ graph: PolicyGraph, _ url: String) throws -> RateLimit? {
        try #require(graph.route(for: url)).rateLimit
    }

    @Test func scopeIsProcessUnlessThePolicySaysFleet() throws {
        let g = try graph("version: 1\nservices:\n  a: { hosts: [a.example.com], rate-limit: { requests-per-second: 5 } }\n")
        #expect(try limit(g, "https://a.example.com/v1")?.scope == .process)
        #expect(try limit(g, "https://a.example.com/v1") == RateLimit(requestsPerSecond: 5, burst: 5), "the old initialiser still says process")
        #expect(RateLimit(requestsPerSecond: 5, burst: 5, scope: .fleet).description == "5.0 req/s, burst 5, shared by the fleet")
        #expect(!RateLimit(requestsPerSecond: 5, burst: 5).description.contains("fleet"))
    }

    @Test func scopeMergesFromDefaultsToServiceToEndpoint() throws {
        let g = try graph("""
            version: 1
            \(Self.coordination)
            defaults:
              rate-limit: { requests-per-second: 10, scope: fleet }
            services:
              inherits:
                hosts: [inherits.example.com]
                rate-limit:
                  requests-per-second: 20
                  endpoints:
                    /v1/search: { requests-per-second: 2 }
                    /v1/local: { requests-per-second: 3, scope: process }
              overrides:
                hosts: [overrides.example.com]
                rate-limit:
                  scope: process
                  endpoints:
                    /v1/shared: { requests-per-second: 1, scope: fleet }
                    /v1/mine: { requests-per-second: 1 }
              off:
                hosts: [off.example.com]
                rate-limit: off
            """)
        // The service keeps the defaults' scope for its own rate; its endpoints take the merged scope...
        #expect(try limit(g, "https://inherits.example.com/v2") == RateLimit(requestsPerSecond: 20, burst: 20, scope: .fleet))
        #expect(try limit(g, "https://inherits.example.com/v1/search/x") == RateLimit(requestsPerSecond: 2, burst: 2, scope: .fleet))
        // ...unless they set their own.
        #expect(try limit(g, "https://inherits.example.com/v1/local") == RateLimit(requestsPerSecond: 3, burst: 3, scope: .process))
        // A service's own scope replaces the defaults' (and its rate is still the defaults').
        #expect(try limit(g, "https://overrides.example.com/v2") == RateLimit(requestsPerSecond: 10, burst: 10, scope: .process))
        #expect(try limit(g, "https://overrides.example.com/v1/mine")?.scope == .process)
        #expect(try limit(g, "https://overrides.example.com/v1/shared")?.scope == .fleet)
        #expect(try limit(g, "https://off.example.com/") == nil)
        // Hosts no service claims get the defaults, scope included.
        #expect(try limit(g, "https://elsewhere.example.org/x")?.scope == .fleet)
        #expect(g.defaults.rateLimit.perEndpoint?.scope == .fleet)
        // Where each scope came from.
        let inherits = try #require(g.service(named: "inherits"))
        #expect(inherits.origins["rate-limit.scope"]?.line == 5, "from defaults")
        let overrides = try #require(g.service(named: "overrides"))
        #expect(overrides.origins["rate-limit.scope"]?.line == 17)
        #expect(overrides.origins["rate-limit.endpoints./v1/shared.scope"]?.line == 19)
        #expect(overrides.origins["rate-limit.endpoints./v1/mine.scope"] == nil, "inherited, so not its own")
    }

    @Test func anEndpointOfTheDefaultsInheritsTheServicesScope() throws {
        // An override declared in `defaults:` takes the scope of the rate limit it ends up in.
        let g = try graph("""
            version: 1
            \(Self.coordination)
            defaults:
              rate-limit: { endpoints: { /login: { requests-per-second: 1 } } }
            services:
              fleet: { hosts: [fleet.example.com], rate-limit: { scope: fleet } }
              local: { hosts: [local.example.com] }
            """)
        #expect(try limit(g, "https://fleet.example.com/login")?.scope == .fleet)
        #expect(try limit(g, "https://local.example.com/login")?.scope == .process)
    }

    @Test(arguments: [
        ("defaults:\n  rate-limit: { scope: global }", "invalid-value", "global", "is 'global', not process or fleet"),
        ("defaults:\n  rate-limit: { scope: fleat }", "invalid-value", "fleat", "not process or fleet"),
        ("defaults:\n  rate-limit: { scope: [fleet] }", "wrong-type", "[fleet]", "must be process or fleet"),
        ("services:\n  a:\n    hosts: [a.example.com]\n    rate-limit: { endpoints: { /x: { requests-per-second: 1, scope: all } } }", "invalid-value", "all", "'rate-limit.endpoints./x.scope' is 'all'"),
    ])
    func aBadScopeIsReportedAtItsValue(_ body: String, _ rule: String, _ at: String, _ message: String) {
        expectOneDiagnostic("version: 1\n\(Self.coordination)\n\(body)\n", rule: rule, at: at, message: message)
    }

    @Test func fleetScopeWithoutCoordinationIsAnErrorAtEachScopeKeyThatSaysIt() throws {
        let yaml = try #require(readText(Fixtures.path("rules/fleet-scope-without-coordination.yaml")))
        let result = compile(yaml)
        #expect(result.graph == nil)
        let errors = result.rules("fleet-scope-without-coordination")
        #expect(errors.map(\.location.line) == [5, 12, 15], "inherited scopes are not reported again")
        for d in errors {
            #expect(d.location.column == column(of: "scope", inLine: d.location.line, of: yaml), "at the scope key: \(d)")
            #expect(d.suggestion?.contains("coordination") == true)
        }
        #expect(errors[0].message.contains("the defaults"))
        #expect(errors[1].message.contains("service 'own'"))
        #expect(errors[2].message.contains("endpoint '/v1/upload' of service 'own'"))
        // The same policy with a coordination section compiles, and a process scope never needs one.
        #expect(try graph(yaml + Self.coordination + "\n").services.count == 3)
        #expect(try graph("version: 1\ndefaults:\n  rate-limit: { requests-per-second: 1, scope: process }\n").coordination == nil)
    }

    @Test func shareTokensIsParsedAndDefaultsToFalse() throws {
        let g = try graph("""
            version: 1
            \(Self.coordination)
            authorisers:
              shared:
                plugin: oauth2-refresh
                share-tokens: true
                settings: { token-url: "https://auth.example.com/t", client-id: app, refresh-token: "${env:R}" }
              own:
                plugin: oauth2-client-credentials
                settings: { token-url: "https://auth.example.com/t", client-id: app, client-secret: "${env:S}" }
              off:
                plugin: oauth2-client-credentials
                share-tokens: false
                settings: { token-url: "https://auth.example.com/t", client-id: other, client-secret: "${env:S}" }
            services:
              a: { hosts: [a.example.com], authoriser: shared }
              b: { hosts: [b.example.com], authoriser: own }
              c: { hosts: [c.example.com], authoriser: off }
            """)
        #expect(g.authorisers["shared"]?.shareTokens == true)
        #expect(g.authorisers["own"]?.shareTokens == false)
        #expect(g.authorisers["off"]?.shareTokens == false)
        #expect(try #require(g.route(for: "https://a.example.com/")).authoriser?.shareTokens == true)
    }

    @Test(arguments: ["yes", "\"true\"", "1", "[true]"])
    func shareTokensMustBeABoolean(_ value: String) throws {
        let yaml = """
            version: 1
            \(Self.coordination)
            authorisers:
              a:
                plugin: oauth2-refresh
                share-tokens: \(value)
                settings: { token-url: "https://auth.example.com/t", client-id: app, refresh-token: "${env:R}" }
            services:
              s: { hosts: [s.example.com], authoriser: a }
            """
        let result = compile(yaml)
        #expect(result.summary == ["wrong-type@7"], "\(result.diagnostics)")
        let d = try #require(result.diagnostics.first)
        #expect(d.message.hasPrefix("'share-tokens' must be true or false"))
        #expect(d.location.column == column(of: value, inLine: 7, of: yaml))
    }

    @Test func shareTokensNeedsCoordinationAndATokenKey() throws {
        let authoriser = """
            authorisers:
              a:
                plugin: oauth2-refresh
                share-tokens: true
                settings: { token-url: "https://auth.example.com/t", client-id: app, refresh-token: "${env:R}" }
            services:
              s: { hosts: [s.example.com], authoriser: a }
            """
        let none = compile("version: 1\n\(authoriser)\n")
        #expect(none.summary == ["shared-tokens-without-coordination@5"])
        #expect(none.diagnostics.first?.location.column == 5, "at the share-tokens key")
        let noKey = compile("version: 1\ncoordination:\n  redis: { url: \"redis://a\" }\n\(authoriser)\n")
        #expect(noKey.summary == ["shared-tokens-without-token-key@7"])
        #expect(noKey.diagnostics.first?.suggestion?.contains("openssl rand -base64 32") == true)
        // A token key that is there but malformed is reported as such, not as missing.
        let badKey = compile("version: 1\ncoordination:\n  redis: { url: \"redis://a\", token-key: \"abc\" }\n\(authoriser)\n")
        #expect(badKey.summary == ["invalid-token-key@3"])
        // A broken section is reported once; the authoriser does not also say "no coordination".
        let broken = compile("version: 1\ncoordination:\n  redis: { url: \"http://a\" }\n\(authoriser)\n")
        #expect(broken.summary == ["invalid-redis-url@3"])
        #expect(try graph("version: 1\n\(Self.coordination)\n\(authoriser)\n").authorisers["a"]?.shareTokens == true)
    }

    @Test func onlyPluginTypesThatSupportSharingMayShare() throws {
        #expect(BuiltInAuthoriserTypes.oauth2Refresh.supportsSharedTokens)
        #expect(BuiltInAuthoriserTypes.oauth2ClientCredentials.supportsSharedTokens)
        for type in [BuiltInAuthoriserTypes.staticBearer, BuiltInAuthoriserTypes.apiKey, BuiltInAuthoriserTypes.basic, BuiltInAuthoriserTypes.hmacSignature] {
            #expect(!type.supportsSharedTokens, "\(type.type)")
        }
        let yaml = """
            version: 1
            \(Self.coordination)
            authorisers:
              a:
                plugin: acme-sso
                share-tokens: true
                settings: { realm: r }
            services:
              s: { hosts: [s.example.com], authoriser: a }
            """
        let refusing = AuthoriserRegistry.builtIn.registering(AuthoriserTypeDescriptor(
            type: "acme-sso", summary: "t", settings: [.init("realm", .string, required: true, "r")]))
        let refused = PolicyCompiler(registry: refusing).compile(source: yaml, path: Fixtures.path("inline.yaml"))
        #expect(refused.summary == ["shared-tokens-unsupported@7"])
        #expect(refused.diagnostics.first?.suggestion == "remove 'share-tokens'; the plugin types that can share tokens: oauth2-client-credentials, oauth2-refresh")
        // A third-party plugin opts in through its descriptor.
        let opting = AuthoriserRegistry.builtIn.registering(AuthoriserTypeDescriptor(
            type: "acme-sso", summary: "t", settings: [.init("realm", .string, required: true, "r")], supportsSharedTokens: true))
        let accepted = PolicyCompiler(registry: opting).compile(source: yaml, path: Fixtures.path("inline.yaml"))
        #expect(accepted.diagnostics.isEmpty, "\(accepted.diagnostics)")
        #expect(accepted.graph?.authorisers["a"]?.shareTokens == true)
    }
}
