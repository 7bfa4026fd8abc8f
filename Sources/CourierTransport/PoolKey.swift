internal import CourierCore

/// Connections are shared by requests with the same pool key: the origin (scheme, host, port), where the socket
/// actually connects to (differs from the origin for a fallback address), and for https the TLS settings, so
/// that two services with different pins or CAs never share a connection; and the proxy a connection goes
/// through (nil: direct), so that a tunnel is reused for its own origin only.
struct PoolKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int
    let connectHost: String
    let connectPort: Int
    /// nil for plain http.
    let tls: TLSPolicy?
    /// The Unix domain socket the connection is made to instead of `connectHost:connectPort`; nil for TCP.
    let unixSocketPath: String?
    /// The proxy the connection goes through; nil for a direct one.
    let proxy: ProxyServer?
    /// Hashed once: the pool looks a key up several times per request, and hashing three strings each time
    /// showed in profiles.
    private let hash: Int

    init(
        scheme: String, host: String, port: Int, connectHost: String, connectPort: Int, tls: TLSPolicy? = nil,
        unixSocketPath: String? = nil, proxy: ProxyServer? = nil
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.connectHost = connectHost
        self.connectPort = connectPort
        self.tls = tls
        self.unixSocketPath = unixSocketPath
        self.proxy = proxy
        var hasher = Hasher()
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(connectHost)
        hasher.combine(connectPort)
        hasher.combine(tls)
        hasher.combine(unixSocketPath)
        hasher.combine(proxy)
        self.hash = hasher.finalize()
    }

    static func == (a: PoolKey, b: PoolKey) -> Bool {
        a.hash == b.hash && a.port == b.port && a.connectPort == b.connectPort && a.host == b.host
            && a.connectHost == b.connectHost && a.scheme == b.scheme && a.tls == b.tls
            && a.unixSocketPath == b.unixSocketPath
            && a.proxy == b.proxy
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    var description: String {
        let origin = "\(scheme)://\(host):\(port)"
        if let unixSocketPath { return "\(origin) via unix:\(unixSocketPath)" }
        let direct = connectHost == host && connectPort == port ? origin : "\(origin) via \(connectHost):\(connectPort)"
        return proxy.map { "\(direct) through \($0)" } ?? direct
    }
}
