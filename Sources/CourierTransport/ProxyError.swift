internal import CourierCore

/// A failure at the proxy hop, naming the proxy (never its password) and what it refused. The one classifier,
/// ``CourierError/from(_:url:deadline:timeouts:)``, turns it into a ``CourierError`` of kind `proxy-resolve`,
/// `connect`, `proxy-tunnel` or `socks` (curl's exit codes 5, 7, 56 and 97 in `courier fetch`).
struct ProxyError: Error, Sendable, CustomStringConvertible {
    enum Reason: Sendable, Equatable {
        /// The proxy's host name did not resolve.
        case unresolved
        /// No connection to the proxy could be made (refused, unreachable).
        case unreachable(String)
        /// The proxy's TLS handshake failed (an `https://` proxy).
        case tls(String)
        /// The `CONNECT` was answered `407`; the scheme the proxy asked for (`Basic`, `Negotiate`), if any.
        case authenticationRequired(scheme: String?, hadCredentials: Bool)
        /// The `CONNECT` was answered with another status outside 2xx.
        case tunnelRefused(status: Int, reason: String)
        /// The proxy's answer broke HTTP/1.1 or SOCKS5, or it closed the connection before answering.
        case badAnswer(String)
        /// The SOCKS5 proxy's reply code (RFC 1928 §6), by name.
        case socksRefused(code: UInt8)
        /// The SOCKS5 proxy accepted none of the offered methods, or refused the username and password.
        case socksAuthentication(String)
    }

    /// `scheme://[user@]host:port`, as ``ProxyServer/description``.
    let proxy: String
    /// The origin the tunnel was to reach, `host:port`.
    let target: String
    let reason: Reason

    /// The error kind it is classified as.
    var kind: CourierError.Kind {
        switch reason {
        case .unresolved: return .proxyResolve
        case .unreachable: return .connect
        case .tls: return .tlsHandshake
        case .authenticationRequired, .tunnelRefused: return .proxyTunnel
        case .badAnswer: return proxy.hasPrefix("socks") ? .socks : .proxyTunnel
        case .socksRefused, .socksAuthentication: return .socks
        }
    }

    /// Whether the proxy says it could not reach the origin (a `CONNECT` answered 502, 503 or 504; SOCKS5's
    /// network or host unreachable, or connection refused): the loader then tries the route's next fallback,
    /// through the same proxy.
    var originUnreachable: Bool {
        switch reason {
        case .tunnelRefused(let status, _): return [502, 503, 504].contains(status)
        case .socksRefused(let code): return [3, 4, 5].contains(code)
        default: return false
        }
    }

    var description: String {
        switch reason {
        case .unresolved:
            return "could not resolve the proxy \(proxy)"
        case .unreachable(let why):
            return "could not connect to the proxy \(proxy) (\(why)); Courier never falls back to a direct connection"
        case .tls(let why):
            return "the TLS handshake with the proxy \(proxy) failed: \(why)"
        case .authenticationRequired(let scheme, let hadCredentials):
            let asked = scheme.map { " (it asks for \($0))" } ?? ""
            let sent = hadCredentials ? "refused the credentials given" : "requires credentials and none were given"
            return "the proxy \(proxy) answered the CONNECT to \(target) with 407: it \(sent)\(asked)"
        case .tunnelRefused(let status, let reason):
            return "the proxy \(proxy) answered the CONNECT to \(target) with \(status)\(reason.isEmpty ? "" : " \(reason)")"
        case .badAnswer(let why):
            return "the proxy \(proxy) gave no valid answer for \(target): \(why)"
        case .socksRefused(let code):
            return "the SOCKS5 proxy \(proxy) refused the connection to \(target): \(SOCKS5Handshake.replyName(code)) (reply \(code))"
        case .socksAuthentication(let why):
            return "the SOCKS5 proxy \(proxy) \(why)"
        }
    }
}
