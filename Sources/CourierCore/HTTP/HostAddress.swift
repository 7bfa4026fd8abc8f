/// A place to connect to: a host name or address literal and an optional port.
///
/// Fallback lists hold these: when the primary host is unreachable the transport connects to the next
/// address while keeping the original `Host` header and TLS server name (like curl's `--connect-to`).
public struct HostAddress: Hashable, Sendable, CustomStringConvertible {
    /// Host name or address literal, lower case, without brackets.
    public var host: String
    /// The port, or nil to keep the original request's port.
    public var port: Int?

    public init(host: String, port: Int? = nil) {
        self.host = host.lowercased()
        self.port = port
    }

    /// Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal.
    public static func parse(_ text: String) -> HostAddress? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            guard HostPattern.isIPLiteral(host), host.contains(":") else { return nil }
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return HostAddress(host: host) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return HostAddress(host: host, port: port)
        }
        if text.filter({ $0 == ":" }).count > 1 {
            return HostPattern.isIPLiteral(text) ? HostAddress(host: text) : nil
        }
        var host = Substring(text)
        var port: Int?
        if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            guard let p = Int(text[text.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
        }
        let h = String(host).lowercased()
        guard HostPattern.isIPLiteral(h) || HostPattern.problem(inHostName: h) == nil else { return nil }
        return HostAddress(host: h, port: port)
    }

    public var description: String {
        port.map { Self.label(host: host, port: $0) } ?? (Self.isIPv6(host) ? "[\(host)]" : host)
    }

    /// `host:port`, with an IPv6 literal in brackets: how a connect target is named in traces, cooldowns and
    /// ``description``. Built for every attempt, so it looks at the host's bytes, not its characters.
    public static func label(host: String, port: Int) -> String {
        isIPv6(host) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func isIPv6(_ host: String) -> Bool {
        host.utf8.contains(UInt8(ascii: ":"))
    }
}
