/// An absolute `http` or `https` URL, parsed strictly (RFC 3986 syntax, the parts HTTP needs).
///
/// Courier parses URLs itself so that the transport and the policy graph agree byte for byte on the host,
/// port and path, and so that nothing here depends on Foundation. The host is lower-cased; IPv6 literals keep
/// their brackets out of ``host`` (`[::1]` → `::1`) and are flagged by ``isIPv6Literal``.
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`, lower case.
    public var scheme: String
    /// Host name or address literal, lower case, without brackets.
    public var host: String
    /// The explicit port, if the URL had one.
    public var explicitPort: Int?
    /// The path, always starting with `/` (an empty path becomes `/`), still percent-encoded.
    public var path: String
    /// The query without its `?`, still percent-encoded; nil when the URL has none.
    public var query: String?

    /// The port to connect to: the explicit one, else 443 for https and 80 for http.
    public var port: Int { explicitPort ?? (scheme == "https" ? 443 : 80) }

    /// Whether the host is an IPv6 address literal.
    public var isIPv6Literal: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// The request target of an origin-form request line: path plus `?query`.
    public var requestTarget: String { query.map { "\(path)?\($0)" } ?? path }

    /// The `Host` header value: host (bracketed for IPv6) plus `:port` when it is not the scheme's default.
    public var hostHeader: String {
        var h = isIPv6Literal ? "[" + host + "]" : host
        if let p = explicitPort, p != (scheme == "https" ? 443 : 80) {
            h += ":"
            h += String(p)
        }
        return h
    }

    /// scheme, host and port: two URLs with the same origin may share credentials and connections.
    public var origin: String { "\(scheme)://\(hostHeader.isEmpty ? host : hostHeader):\(port)" }

    /// The first path component with its leading slash (`/v1` for `/v1/search?q=x`), or `/` for the root.
    public var firstPathComponent: String { String(path[..<firstPathComponentEnd]) }

    /// Where ``firstPathComponent`` ends in ``path``.
    var firstPathComponentEnd: String.Index {
        let utf8 = path.utf8
        guard utf8.count > 1 else { return path.endIndex }
        return utf8[utf8.index(after: utf8.startIndex)...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
    }

    public var description: String {
        var s = "\(scheme)://\(isIPv6Literal ? "[\(host)]" : host)"
        if let p = explicitPort { s += ":\(p)" }
        s += requestTarget
        return s
    }

    /// Parses an absolute http(s) URL; returns nil for anything else (relative references, other schemes,
    /// empty hosts, ports out of range, spaces or control characters anywhere, brackets around anything but an
    /// IPv6 address). The ``description`` of every URL it returns parses back to the same URL.
    public init?(_ string: String) {
        guard let parsed = HTTPURL.parse(Substring(string)) else { return nil }
        self = parsed
    }

    public init(scheme: String, host: String, port: Int? = nil, path: String = "/", query: String? = nil) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.explicitPort = port
        self.path = path.isEmpty ? "/" : path
        self.query = query
    }

    /// Resolves a `Location`-style reference (absolute, scheme-relative, absolute-path or relative-path)
    /// against this URL, per RFC 3986 §5.2 (dot segments removed). Returns nil if the result is not http(s).
    public func resolving(_ reference: String) -> HTTPURL? {
        // Delimiters are found byte by byte (UTF-8), as `init?(_:)` finds them: RFC 3986 delimits by code point,
        // so a `?` followed by a combining mark still starts the query.
        if let absolute = HTTPURL(reference) { return absolute }
        if reference.utf8.starts(with: "//".utf8) { return HTTPURL("\(scheme):\(reference)") }
        guard !reference.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        // A reference with a scheme of its own that is not http(s) is not followed.
        if let colon = reference.utf8.firstIndex(of: UInt8(ascii: ":")),
            !reference.utf8[..<colon].contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        {
            return nil
        }
        var ref = Substring(reference)
        if let hash = ref.utf8.firstIndex(of: UInt8(ascii: "#")) { ref = ref[..<hash] }
        var refQuery: String?
        if let q = ref.utf8.firstIndex(of: UInt8(ascii: "?")) {
            refQuery = String(ref[ref.utf8.index(after: q)...])
            ref = ref[..<q]
        }
        var result = self
        if ref.isEmpty {
            result.query = refQuery ?? query
            return result
        }
        let merged: String
        if ref.utf8.first == UInt8(ascii: "/") {
            merged = String(ref)
        } else {
            let base = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[...$0]) } ?? "/"
            merged = base + ref
        }
        result.path = HTTPURL.removeDotSegments(merged)
        result.query = refQuery
        return result
    }

    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst().map(Substring.init)
        for (i, seg) in segments.enumerated() {
            let isLast = i == segments.count - 1
            if seg == "." {
                if isLast { output.append("") }
            } else if seg == ".." {
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            } else {
                output.append(seg)
            }
        }
        return "/" + output.joined(separator: "/")
    }

    private static func parse(_ input: Substring) -> HTTPURL? {
        // Searched byte by byte (UTF-8): every delimiter is ASCII, and a UTF-8 index is a valid String index at a
        // scalar boundary, so no grapheme breaking is needed.
        let bytes = input.utf8
        // No whitespace or control characters anywhere: they are how header injection starts.
        guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = input[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = input[input.utf8.index(after: colon)...]
        guard rest.utf8.starts(with: "//".utf8) else { return nil }
        rest = rest[rest.utf8.index(rest.startIndex, offsetBy: 2)...]
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        let authorityEnd = rest.utf8.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var pathAndQuery = rest[authorityEnd...]
        // userinfo is deprecated in http(s) URLs (RFC 9110 §4.2.4) and a classic phishing vector: refuse it.
        guard !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
        var host: Substring
        var port: Int?
        if authority.utf8.first == UInt8(ascii: "[") {
            guard let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = authority[authority.utf8.index(after: authority.startIndex)..<close]
            // RFC 3986 IP-literal: an IPv6 address only (a bracketed name or IPv4 address is not one).
            guard IPv6Literal.isValid(host) else { return nil }
            authority = authority[authority.utf8.index(after: close)...]
            if !authority.isEmpty {
                guard authority.utf8.first == UInt8(ascii: ":") else { return nil }
                guard let p = parsePort(authority[authority.utf8.index(after: authority.startIndex)...]) else { return nil }
                port = p
            }
        } else {
            if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
                host = authority[..<colon]
                guard let p = parsePort(authority[authority.utf8.index(after: colon)...]) else { return nil }
                port = p
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.allSatisfy(isRegNameByte) else { return nil }
        }
        var query: String?
        if let q = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) {
            query = String(pathAndQuery[pathAndQuery.utf8.index(after: q)...])
            pathAndQuery = pathAndQuery[..<q]
        }
        var url = HTTPURL(scheme: scheme, host: String(host), port: port, path: String(pathAndQuery), query: query)
        url.host = String(host).lowercased()
        return url
    }

    private static func parsePort(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.utf8.count <= 5, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let p = Int(s),
            p > 0, p <= 65535
        else { return nil }
        return p
    }

    private static func isRegNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }
}
