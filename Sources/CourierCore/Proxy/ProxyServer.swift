/// A proxy a request goes through: an HTTP proxy (`http://`, or `https://` for one reached over TLS) or a SOCKS5
/// proxy (`socks5://` resolving the origin's name locally, `socks5h://` letting the proxy resolve it), with its
/// optional credentials (HTTP Basic for an HTTP proxy, RFC 1929 for SOCKS5).
///
/// The password never appears in ``description``.
public struct ProxyServer: Hashable, Sendable, CustomStringConvertible {
    public enum Scheme: String, Hashable, Sendable, CaseIterable {
        case http, https, socks5, socks5h

        /// curl's default ports: 1080 for every scheme but https (443).
        public var defaultPort: Int { self == .https ? 443 : 1080 }

        /// Whether this is a SOCKS proxy (a tunnel for every request) rather than an HTTP proxy.
        package var isSOCKS: Bool { self == .socks5 || self == .socks5h }
    }

    public var scheme: Scheme
    /// Host name or address literal, lower case, without brackets.
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    /// A CA bundle (PEM) to verify an `https://` proxy's own certificate with, instead of the system's trust
    /// store: curl's `--proxy-cacert`. Not used for the origin behind it.
    public var caFile: String?

    public init(scheme: Scheme, host: String, port: Int? = nil, username: String? = nil, password: String? = nil, caFile: String? = nil) {
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? scheme.defaultPort
        self.username = username
        self.password = password
        self.caFile = caFile
    }

    /// Why a proxy URL was refused.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        case unknownScheme(String)
        case badURL(String)

        public var description: String {
            switch self {
            case .unknownScheme(let scheme):
                return "the proxy scheme '\(scheme)' is not supported (use http, https, socks5 or socks5h)"
            case .badURL(let why): return "the proxy URL is invalid: \(why)"
            }
        }
    }

    /// Parses `[scheme://][user[:password]@]host[:port][/]`, as curl reads `-x` and `https_proxy`: no scheme means
    /// `http`, no port the scheme's default (``Scheme/defaultPort``); the user and password are percent-decoded.
    public static func parse(_ text: String) throws(ParseError) -> ProxyServer {
        var rest = Substring(text.trimmingHTTPWhitespace)
        var scheme = Scheme.http
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
            let name = rest[..<colon].lowercased()
            switch name {
            case "socks5h": scheme = .socks5h
            case "socks5": scheme = .socks5
            case "https": scheme = .https
            case "http": scheme = .http
            default: throw .unknownScheme(name)
            }
            rest = rest[rest.index(colon, offsetBy: 3)...]
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else { throw .badURL("a proxy URL has no path") }
            rest = rest[..<slash]
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = userinfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = parts[0].percentDecoded, let pass = parts.count > 1 ? parts[1].percentDecoded : "" else {
                throw .badURL("bad percent-encoding in the credentials")
            }
            username = user
            password = parts.count > 1 ? pass : nil
        }
        guard !rest.isEmpty, let address = HostAddress.parse(String(rest)) else {
            throw .badURL("'\(String(rest))' is not a host[:port]")
        }
        return ProxyServer(scheme: scheme, host: address.host, port: address.port, username: username, password: password)
    }

    /// `scheme://host:port`, with `user@` when there are credentials; never the password.
    public var description: String {
        let user = username.map { "\($0)@" } ?? ""
        return "\(scheme.rawValue)://\(user)\(HostAddress.label(host: host, port: port))"
    }
}
