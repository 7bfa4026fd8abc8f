internal import CourierAuthorisers
internal import CourierCore
internal import Synchronization

extension DataLoaderService {
    /// The selection every load starts from: the configuration's explicit proxy and no-proxy list, and the
    /// environment unless it is turned off; and whether it can name a proxy at all.
    static func proxySelection(_ configuration: Configuration) -> (ProxySelection, Bool) {
        let environment = configuration.usesEnvironmentProxies ? configuration.environment : nil
        let selection = ProxySelection(
            explicit: configuration.proxy.map { .through($0, except: NoProxyList("")) },
            explicitNoProxy: configuration.noProxy.map { NoProxyList($0) },
            environment: environment
        )
        let names = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"]
        let environmentNames = environment.map { env in names.contains { env[$0].map { !$0.isEmpty } ?? false } } ?? false
        return (selection, configuration.proxy != nil || environmentNames)
    }

    /// The proxy a request to `url` on `route` goes through (nil: direct), and why: the configuration's explicit
    /// proxy, else the route's `proxy:` (its secrets resolved once per setting), else the environment.
    ///
    /// - Throws: a `policy` ``CourierError`` when a proxy secret cannot be resolved or the environment's proxy URL
    ///   is invalid; nothing is sent then.
    func proxyDecision(for url: HTTPURL, route: Route) throws(CourierError) -> ProxySelection.Decision? {
        guard route.proxy != nil || mayProxyOutsidePolicy else { return nil }
        var selection = proxies
        if let policy = route.proxy { selection.policy = try resolved(policy) }
        return try selection.decide(for: url)
    }

    private func resolved(_ policy: ProxyPolicy) throws(CourierError) -> ProxySelection.Choice {
        if let known = resolvedProxies.withLock({ $0[policy] }) { return known }
        let secrets = SecretResolver.system(environment: environment)
        let choice: ProxySelection.Choice
        do {
            choice = try policy.choice { reference throws(AuthoriserError) in try secrets.resolve(reference) }
        } catch {
            throw CourierError(.policy, "the proxy's credentials could not be resolved: \(error.message)", cause: error)
        }
        resolvedProxies.withLock { $0[policy] = choice }
        return choice
    }
}
