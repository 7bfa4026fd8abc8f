/// Which proxy a request goes through, and why: curl's order of sources. A request's explicit proxy (`-x`, a
/// request's own setting) wins, then the route's policy (`proxy:` in `defaults` or the service, `proxy: off` to go
/// direct), then the environment (`https_proxy`/`HTTPS_PROXY` for https, `http_proxy` for http, then
/// `all_proxy`/`ALL_PROXY`). Upper-case `HTTP_PROXY` is never read: under CGI it is the request's `Proxy:` header,
/// set by whoever sends the request (httpoxy), which is why curl ignores it too.
///
/// A no-proxy list exempts hosts: an explicit one (`--noproxy`, which replaces the environment's) applies to every
/// source; the policy's to the policy's proxy; the environment's `no_proxy`/`NO_PROXY` to the explicit and the
/// environment's proxies. Pure: the environment is a dictionary the caller reads (or leaves out).
package struct ProxySelection: Sendable {
    /// What a source says about a route.
    package enum Choice: Hashable, Sendable {
        /// Go direct: `-x ""`, `proxy: off`.
        case direct
        /// Through this proxy, except for the hosts in the list.
        case through(ProxyServer, except: NoProxyList)
    }

    /// Where the decision came from.
    package enum Source: Hashable, Sendable {
        case explicit
        case policy
        /// The variable's name.
        case environment(String)
        /// No source names a proxy.
        case none
    }

    package struct Decision: Hashable, Sendable, CustomStringConvertible {
        /// nil: connect directly.
        package var proxy: ProxyServer?
        package var source: Source
        /// Why, in a sentence fragment: `"https_proxy is set"`, `"the host matches no_proxy entry '.corp'"`.
        package var reason: String

        package var description: String {
            guard let proxy else { return "direct (\(reason))" }
            return "\(proxy) (\(reason))"
        }
    }

    /// The request's or command line's own choice (`-x URL`, `-x ""`); nil when none was given.
    package var explicit: Choice?
    /// `--noproxy LIST`: replaces the environment's list for every source.
    package var explicitNoProxy: NoProxyList?
    /// The route's `proxy:` setting; nil when the policy says nothing (or there is no policy).
    package var policy: Choice?
    /// The process's environment, or nil when the caller turned environment proxies off.
    package var environment: [String: String]?

    package init(explicit: Choice? = nil, explicitNoProxy: NoProxyList? = nil, policy: Choice? = nil, environment: [String: String]? = nil) {
        self.explicit = explicit
        self.explicitNoProxy = explicitNoProxy
        self.policy = policy
        self.environment = environment
    }

    /// The decision for a request to `url`'s host and port.
    ///
    /// - Throws: ``CourierError`` (`policy`) when the environment variable that applies holds no valid proxy URL.
    package func decide(for url: HTTPURL) throws(CourierError) -> Decision {
        let environmentNoProxy = environmentList()
        if let explicit {
            switch explicit {
            case .direct:
                return Decision(proxy: nil, source: .explicit, reason: "the proxy was turned off explicitly")
            case .through(let proxy, _):
                return exempted(url, by: [("--noproxy", explicitNoProxy), environmentNoProxy], source: .explicit)
                    ?? Decision(proxy: proxy, source: .explicit, reason: "a proxy was given explicitly")
            }
        }
        if let policy {
            switch policy {
            case .direct:
                return Decision(proxy: nil, source: .policy, reason: "the policy says proxy: off")
            case .through(let proxy, let except):
                return exempted(url, by: [("--noproxy", explicitNoProxy), ("the policy's no-proxy", except)], source: .policy)
                    ?? Decision(proxy: proxy, source: .policy, reason: "the policy names a proxy")
            }
        }
        guard let environment else {
            return Decision(proxy: nil, source: .none, reason: "no proxy is set (environment proxies are turned off)")
        }
        let names = url.scheme == "https" ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        for name in names {
            guard let value = environment[name], !value.trimmingHTTPWhitespace.isEmpty else { continue }
            let proxy: ProxyServer
            do {
                proxy = try ProxyServer.parse(value)
            } catch {
                throw CourierError(.policy, "the environment variable \(name) holds no valid proxy URL: \(error)", url: url.description)
            }
            return exempted(url, by: [("--noproxy", explicitNoProxy), environmentNoProxy], source: .environment(name))
                ?? Decision(proxy: proxy, source: .environment(name), reason: "\(name) is set")
        }
        return Decision(proxy: nil, source: .none, reason: "no proxy is set")
    }

    /// `no_proxy` (else `NO_PROXY`) from the environment, unless an explicit list replaces it.
    private func environmentList() -> (String, NoProxyList?) {
        guard explicitNoProxy == nil, let environment else { return ("no_proxy", nil) }
        for name in ["no_proxy", "NO_PROXY"] {
            if let value = environment[name], !value.isEmpty { return (name, NoProxyList(value)) }
        }
        return ("no_proxy", nil)
    }

    /// A direct decision when one of `lists` (the first present that matches) exempts the URL's host.
    private func exempted(_ url: HTTPURL, by lists: [(String, NoProxyList?)], source: Source) -> Decision? {
        for (name, list) in lists {
            guard let list, list.matches(host: url.host, port: url.port) else { continue }
            return Decision(proxy: nil, source: source, reason: "\(url.host) matches \(name) ('\(list.text)')")
        }
        return nil
    }
}
