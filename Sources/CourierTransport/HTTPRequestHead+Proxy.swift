internal import CourierCore
internal import CourierHTTP1

extension HTTPRequestHead {
    /// Makes this plain-http request one for an HTTP proxy (RFC 9112 §3.2.2): the target in absolute form, naming
    /// the connect target (the URL's host as written, or its fallback), and the proxy's `Proxy-Authorization`
    /// when it has credentials. The `Host` field stays the URL's.
    mutating func forwardProxy(_ proxy: ProxyServer, key: PoolKey) {
        let authority = HostAddress.label(host: key.connectHost, port: key.connectPort)
        target = "http://\(authority)\(target)"
        if let authorization = HTTPConnectHandshake.authorization(for: proxy) {
            headers.add(name: "Proxy-Authorization", value: authorization)
        }
    }
}
