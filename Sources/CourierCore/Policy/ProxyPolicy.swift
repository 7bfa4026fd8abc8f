/// A route's `proxy:` setting, as compiled: `off` (go direct, whatever the environment says) or a proxy with its
/// credentials still as the policy wrote them (`${env:…}` and `${file:…}` references are resolved by the data
/// loader, as authoriser secrets are) and its no-proxy list. A service's `proxy:` replaces the defaults' whole
/// (a service naming another proxy never inherits the defaults' credentials).
package enum ProxyPolicy: Hashable, Sendable {
    case off
    case through(Settings)

    package struct Settings: Hashable, Sendable {
        /// The proxy (scheme, host, port, `ca-file`); credentials written in the URL are in it too.
        package var server: ProxyServer
        package var username: PolicyString?
        package var password: PolicyString?
        /// `no-proxy:`, as a list.
        package var noProxy: NoProxyList
        /// Where `proxy:` is written.
        package var definedAt: SourceLocation

        package init(server: ProxyServer, username: PolicyString? = nil, password: PolicyString? = nil, noProxy: NoProxyList = NoProxyList(""), definedAt: SourceLocation) {
            self.server = server
            self.username = username
            self.password = password
            self.noProxy = noProxy
            self.definedAt = definedAt
        }
    }

    /// The choice for ``ProxySelection``, with the credentials' references resolved by `lookup`.
    package func choice<E: Error>(resolving lookup: (SecretReference) throws(E) -> String) throws(E) -> ProxySelection.Choice {
        switch self {
        case .off:
            return .direct
        case .through(let settings):
            var server = settings.server
            if let username = settings.username { server.username = try username.resolve(lookup) }
            if let password = settings.password { server.password = try password.resolve(lookup) }
            return .through(server, except: settings.noProxy)
        }
    }

    /// What `courier explain` shows: `off`, or the proxy (never its password) and its no-proxy list.
    package var summary: String {
        switch self {
        case .off: return "off"
        case .through(let settings):
            var text = settings.server.description
            if settings.server.username == nil, let username = settings.username { text = text.replacingFirst("://", with: "://\(username)@") }
            if !settings.noProxy.isEmpty { text += " (no-proxy: \(settings.noProxy.text))" }
            return text
        }
    }
}

extension String {
    /// The string with the first `target` replaced (nothing to replace: the string as it is).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let index = utf8.indices.first(where: { utf8[$0...].starts(with: target.utf8) }) else { return self }
        let end = utf8.index(index, offsetBy: target.utf8.count)
        return String(self[..<index]) + replacement + String(self[end...])
    }
}
