internal import CourierCore

extension PolicyFileParser {
    /// `proxy:` in `defaults` or a service: `off`, or a mapping with `url` (required), `username`, `password`,
    /// `no-proxy` and `ca-file`. One leaf, `proxy`: a service's replaces the defaults' whole.
    mutating func parseProxy(_ node: Int, into layer: inout PolicyLayer) {
        if isOffSwitch(node) {
            layer.set("proxy", .proxy(.off), at: location(node))
            return
        }
        guard let pairs = mapping(node, PolicyLanguage.proxy) else { return }
        var server: ProxyServer?
        var username: PolicyString?
        var password: PolicyString?
        var noProxy = NoProxyList("")
        var caFile: String?
        var broken = false
        for (key, keyNode, value) in pairs {
            let path = "proxy.\(key)"
            switch key {
            case "url":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "proxy.url must be a string such as \"http://proxy.internal:3128\"", at: value)
                    broken = true
                    continue
                }
                do {
                    let parsed = try ProxyServer.parse(text)
                    server = parsed
                    if let literal = parsed.password, !literal.isEmpty {
                        reportLiteralSecret("the password in proxy.url", name: "proxy-password", at: value)
                    }
                } catch {
                    broken = true
                    // A URL with credentials in it is not quoted: it may hold a secret.
                    let shown = text.contains("@") ? "" : " '\(text.abbreviated)'"
                    switch error {
                    case .unknownScheme(let scheme):
                        report(.unknownProxyScheme, "the proxy scheme '\(scheme.abbreviated)' is not supported", at: value,
                               suggestion: "use http:// (CONNECT for https), https:// (TLS to the proxy), socks5:// or socks5h://")
                    case .badURL(let why):
                        report(.invalidProxyURL, "the proxy URL\(shown) is invalid: \(why)", at: value,
                               suggestion: "write [scheme://]host[:port], e.g. \"http://proxy.internal:3128\"")
                    }
                }
            case "username":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "proxy.username must be a string", at: value)
                    continue
                }
                username = references(text, at: value)
            case "password":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "proxy.password must be a string", at: value)
                    continue
                }
                guard let secret = references(text, at: value) else { continue }
                password = secret
                if let literal = secret.literalValue, !literal.isEmpty { reportLiteralSecret(path, name: "proxy-password", at: value) }
            case "no-proxy":
                if let (text, _) = scalar(value), !isNull(value) {
                    noProxy = NoProxyList(text)
                } else if let items = list(value, key: path) {
                    var entries: [String] = []
                    for item in items {
                        guard let (text, _) = scalar(item), !isNull(item) else {
                            report(.wrongType, "proxy.no-proxy entries must be host names, addresses or CIDR ranges", at: item)
                            continue
                        }
                        entries.append(text)
                    }
                    noProxy = NoProxyList(entries)
                }
            case "ca-file":
                caFile = self.caFile(value, key: path)
            default: unhandled(key, keyNode)
            }
        }
        guard var server else {
            if !broken && !pairs.contains(where: { $0.key == "url" }) {
                report(.invalidProxyURL, "proxy has no 'url'", at: node, suggestion: "add 'url: \"http://proxy.internal:3128\"', or write 'proxy: off' to go direct")
            }
            return
        }
        server.caFile = caFile
        let settings = ProxyPolicy.Settings(server: server, username: username, password: password, noProxy: noProxy, definedAt: location(node))
        layer.set("proxy", .proxy(.through(settings)), at: location(node))
    }
}
