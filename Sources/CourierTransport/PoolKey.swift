/// Connections are shared by requests with the same pool key: the origin (scheme, host, port) and where the
/// socket actually connects to (differs from the origin for a fallback address). TLS settings join the key
/// when TLS lands.
struct PoolKey: Hashable, Sendable, CustomStringConvertible {
    var scheme: String
    var host: String
    var port: Int
    var connectHost: String
    var connectPort: Int

    var description: String {
        let origin = "\(scheme)://\(host):\(port)"
        return connectHost == host && connectPort == port ? origin : "\(origin) via \(connectHost):\(connectPort)"
    }
}
