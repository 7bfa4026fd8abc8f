package import CourierCore

/// Which proxy a route's requests go through and why, as `courier explain` shows it: curl's order (an explicit
/// proxy, the policy's `proxy:`, the environment). The proxy's password is never shown, and the policy's secret
/// references are never resolved.
package struct RouteProxy: Hashable, Sendable, Encodable {
    /// The proxy (`scheme://[user@]host:port`), or nil for a direct connection.
    package var proxy: String?
    /// `policy`, `environment`, `explicit` or `none`.
    package var source: String
    /// The environment variable the proxy came from, when it did.
    package var variable: String?
    /// Why, in a sentence fragment.
    package var reason: String

    /// The decision for `url` on `route`, with `environment` the variables a load would read (nil: environment
    /// proxies are off).
    package init(route: Route, url: HTTPURL, environment: [String: String]?) {
        var selection = ProxySelection(environment: environment)
        // References stay references: the decision needs the proxy, never its secret.
        selection.policy = route.proxy.map { policy in policy.choice { (reference: SecretReference) -> String in reference.description } }
        do {
            let decision = try selection.decide(for: url)
            var shown = decision.proxy
            shown?.password = nil
            proxy = shown?.description
            reason = decision.reason
            switch decision.source {
            case .explicit: source = "explicit"
            case .policy: source = "policy"
            case .environment(let name):
                source = "environment"
                variable = name
            case .none: source = "none"
            }
        } catch {
            proxy = nil
            source = "environment"
            reason = error.message
        }
    }
}
