import CourierCore
import Testing

/// curl's order of proxy sources, and which environment variables it reads.
struct ProxySelectionTests {
    static let https = HTTPURL("https://api.example.com/v1")!
    static let http = HTTPURL("http://api.example.com/v1")!
    static let explicit = ProxyServer(scheme: .http, host: "explicit", port: 1)
    static let policy = ProxyServer(scheme: .http, host: "policy", port: 2)

    @Test func anExplicitProxyWinsOverThePolicyAndTheEnvironment() throws {
        let selection = ProxySelection(
            explicit: .through(Self.explicit, except: NoProxyList("")), policy: .through(Self.policy, except: NoProxyList("")),
            environment: ["https_proxy": "http://env:3"]
        )
        let decision = try selection.decide(for: Self.https)
        #expect(decision.proxy == Self.explicit)
        #expect(decision.source == .explicit)
    }

    @Test func thePolicyWinsOverTheEnvironmentAndProxyOffGoesDirect() throws {
        var selection = ProxySelection(policy: .through(Self.policy, except: NoProxyList("")), environment: ["https_proxy": "http://env:3"])
        #expect(try selection.decide(for: Self.https).proxy == Self.policy)
        selection.policy = .direct
        let off = try selection.decide(for: Self.https)
        #expect(off.proxy == nil)
        #expect(off.source == .policy)
        #expect(off.reason.contains("proxy: off"))
    }

    @Test func theEnvironmentIsReadByScheme() throws {
        let environment = ["https_proxy": "http://secure:1", "http_proxy": "http://plain:2", "ALL_PROXY": "socks5://all:3"]
        let selection = ProxySelection(environment: environment)
        let secure = try selection.decide(for: Self.https)
        #expect(secure.proxy?.host == "secure")
        #expect(secure.source == .environment("https_proxy"))
        #expect(try selection.decide(for: Self.http).proxy?.host == "plain")
        let fallback = try ProxySelection(environment: ["ALL_PROXY": "socks5://all:3"]).decide(for: Self.http)
        #expect(fallback.proxy?.scheme == .socks5)
        #expect(try ProxySelection(environment: ["HTTPS_PROXY": "http://upper:4"]).decide(for: Self.https).proxy?.host == "upper")
    }

    @Test func upperCaseHTTPProxyIsIgnoredForHTTP() throws {
        // Under CGI, HTTP_PROXY is the request's own `Proxy:` header (httpoxy): curl never reads it.
        let decision = try ProxySelection(environment: ["HTTP_PROXY": "http://attacker:8080"]).decide(for: Self.http)
        #expect(decision.proxy == nil)
        #expect(decision.source == .none)
    }

    @Test func noProxyExemptsHostsAndAnExplicitListReplacesTheEnvironments() throws {
        let environment = ["https_proxy": "http://env:3", "no_proxy": ".example.com"]
        let exempted = try ProxySelection(environment: environment).decide(for: Self.https)
        #expect(exempted.proxy == nil)
        #expect(exempted.reason.contains("no_proxy"))
        // `--noproxy ""` replaces the environment's list: the proxy applies again.
        let replaced = try ProxySelection(explicitNoProxy: NoProxyList(""), environment: environment).decide(for: Self.https)
        #expect(replaced.proxy?.host == "env")
        // The environment's list applies to an explicit proxy too, as curl's does.
        let explicit = try ProxySelection(explicit: .through(Self.explicit, except: NoProxyList("")), environment: environment)
            .decide(for: Self.https)
        #expect(explicit.proxy == nil)
        // The policy's own list applies to the policy's proxy, not the environment's.
        let policy = try ProxySelection(policy: .through(Self.policy, except: NoProxyList("other.org")), environment: environment)
            .decide(for: Self.https)
        #expect(policy.proxy == Self.policy)
    }

    @Test func turningTheEnvironmentOffIgnoresItsVariables() throws {
        let decision = try ProxySelection(environment: nil).decide(for: Self.https)
        #expect(decision.proxy == nil)
        #expect(decision.reason.contains("turned off"))
    }

    @Test func aBadEnvironmentProxyIsAPolicyErrorNamingTheVariable() {
        #expect {
            try ProxySelection(environment: ["https_proxy": "gopher://x"]).decide(for: Self.https)
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.kind == .policy && error.message.contains("https_proxy") && error.message.contains("gopher")
        }
    }
}
