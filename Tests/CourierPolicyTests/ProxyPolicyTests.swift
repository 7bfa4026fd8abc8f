import CourierCore
import CourierPolicy
import Testing

/// `proxy:` in defaults and services: what each route gets, `off`, a service replacing the defaults' whole, and
/// its diagnostics where they are written.
@Suite struct ProxyPolicyTests {
    static let yaml = """
        version: 1
        defaults:
          proxy:
            url: "http://proxy.internal:3128"
            username: courier
            password: "${env:PROXY_PASSWORD}"
            no-proxy: [.internal, 10.0.0.0/8]
        services:
          inherits: { hosts: [a.example.com] }
          direct: { hosts: [b.example.com], proxy: off }
          socks:
            hosts: [c.example.com]
            proxy: { url: "socks5h://socks.internal" }
        """

    @Test func servicesInheritTheDefaultsProxyOrReplaceItWhole() throws {
        let result = compile(Self.yaml)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let graph = try #require(result.graph)
        guard case .through(let inherited)? = try #require(graph.route(for: "https://a.example.com/")).proxy else {
            Issue.record("the service did not inherit the defaults' proxy")
            return
        }
        #expect(inherited.server == ProxyServer(scheme: .http, host: "proxy.internal", port: 3128))
        #expect(inherited.username?.literalValue == "courier")
        #expect(inherited.password?.references == [SecretReference(source: .env, name: "PROXY_PASSWORD")])
        #expect(inherited.noProxy.matches(host: "db.internal", port: 5432))
        #expect(inherited.noProxy.matches(host: "10.1.2.3", port: 443))
        #expect(inherited.definedAt.line == 4)
        #expect(try #require(graph.route(for: "https://b.example.com/")).proxy == .off)
        guard case .through(let socks)? = try #require(graph.route(for: "https://c.example.com/")).proxy else {
            Issue.record("the service's own proxy was lost")
            return
        }
        // Replaced whole: the defaults' credentials are for another proxy.
        #expect(socks.server == ProxyServer(scheme: .socks5h, host: "socks.internal", port: 1080))
        #expect(socks.username == nil && socks.password == nil)
        // Hosts no service claims use the defaults' proxy.
        #expect(try #require(graph.route(for: "https://elsewhere.example.org/")).proxy == graph.defaults.proxy)
    }

    @Test func aPolicyWithoutProxyLeavesItToTheEnvironment() throws {
        let graph = try #require(compile("version: 1\nservices:\n  a: { hosts: [a.example.com] }\n").graph)
        #expect(try #require(graph.route(for: "https://a.example.com/")).proxy == nil)
    }

    @Test func theResolvedChoiceCarriesTheSecretAndTheSummaryNever() throws {
        let graph = try #require(compile(Self.yaml).graph)
        let route = try #require(graph.route(for: "https://a.example.com/"))
        let policy = try #require(route.proxy)
        let choice = policy.choice { (reference: SecretReference) -> String in reference.name == "PROXY_PASSWORD" ? "s3cret" : "" }
        guard case .through(let server, _) = choice else {
            Issue.record("no proxy")
            return
        }
        #expect(server.username == "courier" && server.password == "s3cret")
        #expect(policy.summary == "http://courier@proxy.internal:3128 (no-proxy: .internal,10.0.0.0/8)")
    }

    @Test func badURLsPointAtTheValue() {
        expectOneDiagnostic(
            "version: 1\ndefaults:\n  proxy: { url: \"gopher://proxy:70\" }\n", rule: "unknown-proxy-scheme", at: "\"gopher",
            message: "the proxy scheme 'gopher' is not supported"
        )
        expectOneDiagnostic(
            "version: 1\ndefaults:\n  proxy: { url: \"http://user:pw@pro xy:3128\" }\n", rule: "invalid-proxy-url", at: "\"http",
            message: "the proxy URL is invalid: 'pro xy:3128' is not a host[:port]"
        )
    }
}
