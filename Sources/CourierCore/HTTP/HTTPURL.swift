/// An absolute `http` or `https` URL, parsed strictly (RFC 3986 syntax, the parts HTTP needs); or, parsed with
/// ``init(anyScheme:)``, a URL of another scheme that a ``ProtocolPlugin`` answers: with an authority
/// (`file:///abs/path`, `memo://notes/1`, whose host may be empty) or without one (`data:,Hello`).
///
/// Courier parses URLs itself so that the transport and the policy graph agree byte for byte on the host,
/// port and path, and so that nothing here depends on Foundation. The host is lower-cased; IPv6 literals keep
/// their brackets out of ``host`` (`[::1]` → `::1`) and are flagged by ``isIPv6Literal``.
public struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https` (or, from ``init(anyScheme:)``, another scheme), lower case.
    public var scheme: String
    /// Host name or address literal, lower case, without brackets; empty for a URL without one (`data:`,
    /// `file:///x`).
    public var host: String
    /// The explicit port, if the URL had one.
    package var explicitPort: Int?
    /// The path, always starting with `/` (an empty path becomes `/`), still percent-encoded. A URL without an
    /// authority (`data:text/plain,x`) has no such path: this is then everything after the scheme's colon up to
    /// a `#`, still percent-encoded (it never starts with `/`), and ``query`` is nil.
    public var path: String
    /// The query without its `?`, still percent-encoded; nil when the URL has none.
    public var query: String?

    /// The port to connect to: the explicit one, else 443 for https, 80 for http (and 0 for other schemes).
    public var port: Int { explicitPort ?? defaultPort }

    /// The scheme's default port: 443 for https, 80 for http, 0 for the schemes of protocol plugins.
    private var defaultPort: Int {
        switch scheme {
        case "https": return 443
        case "http": return 80
        default: return 0
        }
    }

    /// Whether the scheme is `http` or `https` (the ones Courier's own transport speaks).
    public var isHTTP: Bool { scheme == "http" || scheme == "https" }

    /// Whether the URL has an authority (`scheme://host…`): every http(s) URL; not a `data:` URL.
    package var hasAuthority: Bool { path.utf8.first == UInt8(ascii: "/") }

    /// Whether the host is an IPv6 address literal.
    package var isIPv6Literal: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// The request target of an origin-form request line: path plus `?query`.
    public var requestTarget: String { query.map { "\(path)?\($0)" } ?? path }

    /// The `Host` header value: host (bracketed for IPv6) plus `:port` when it is not the scheme's default.
    package var hostHeader: String {
        var h = isIPv6Literal ? "[" + host + "]" : host
        if let p = explicitPort, p != defaultPort {
            h += ":"
            h += String(p)
        }
        return h
    }

    /// scheme, host and port: two URLs with the same origin may share credentials and connections.
    public var origin: String { "\(scheme)://\(hostHeader.isEmpty ? host : hostHeader):\(port)" }

    /// The first path component with its leading slash (`/v1` for `/v1/search?q=x`), or `/` for the root.
    package var firstPathComponent: String { String(path[..<firstPathComponentEnd]) }

    /// Where ``firstPathComponent`` ends in ``path``.
    /// A URL without an authority has none (its "path" is data, not a place: a `data:` URL's rate-limit key is
    /// the empty host's root).
    var firstPathComponentEnd: String.Index {
        let utf8 = path.utf8
        guard hasAuthority else { return path.startIndex }
        guard utf8.count > 1 else { return path.endIndex }
        return utf8[utf8.index(after: utf8.startIndex)...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
    }

    public var description: String {
        guard hasAuthority else { return "\(scheme):\(path)" }
        var s = "\(scheme)://\(isIPv6Literal ? "[\(host)]" : host)"
        if let p = explicitPort { s += ":\(p)" }
        s += requestTarget
        return s
    }

    /// Parses an absolute http(s) URL; returns nil for anything else (relative references, other schemes,
    /// empty hosts, ports out of range, spaces or control characters anywhere, brackets around anything but an
    /// IPv6 address). The ``description`` of every URL it returns parses back to the same URL.
    public init?(_ string: String) {
        guard let parsed = HTTPURL.parse(string, anyScheme: false) else { return nil }
        self = parsed
    }

    /// Parses an absolute URL of any scheme: http(s) exactly as ``init(_:)`` does; another scheme (RFC 3986:
    /// a letter, then letters, digits, `+`, `-`, `.`) either with an authority (`file:///etc/hosts`,
    /// `memo://notes/7?x`: the host may be empty, a port needs a host, userinfo is refused) or without one
    /// (`data:text/plain;base64,SGk=`: everything up to a `#` is kept in ``path``). Spaces and control
    /// characters are refused everywhere. Which schemes are answered is the ``ProtocolRegistry``'s business, not
    /// the parser's; the ``description`` of every URL it returns parses back to the same URL.
    public init?(anyScheme string: String) {
        guard let parsed = HTTPURL.parse(string, anyScheme: true) else { return nil }
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
    /// against this URL, per RFC 3986 §5.2 (dot segments removed). Returns nil if the result is not http(s) (or,
    /// for a URL of a plugin's scheme with an authority, a relative reference's result in that scheme; a URL
    /// without an authority resolves only absolute http(s) references).
    public func resolving(_ reference: String) -> HTTPURL? {
        // Delimiters are found byte by byte (UTF-8), as `init?(_:)` finds them: RFC 3986 delimits by code point,
        // so a `?` followed by a combining mark still starts the query.
        if let absolute = HTTPURL(reference) { return absolute }
        guard hasAuthority else { return nil }
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

    /// Parses `string`'s UTF-8 bytes in place, by offset: every delimiter is ASCII, so each part cut at one is
    /// valid UTF-8 on its own and becomes a `String` with no checks beyond a copy. (Searching through
    /// `Substring.UTF8View` indices cost about 1.5 µs per URL, a fiftieth of a whole load through the loader.)
    private static func parse(_ string: String, anyScheme: Bool) -> HTTPURL? {
        var string = string
        return string.withUTF8 { parse(bytes: $0, anyScheme: anyScheme) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>, anyScheme: Bool) -> HTTPURL? {
        let count = bytes.count
        func part(_ from: Int, _ to: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
        }
        // No whitespace or control characters anywhere: they are how header injection starts.
        var colon: Int?
        for i in 0..<count {
            let b = bytes[i]
            if b <= 0x20 || b == 0x7F { return nil }
            if colon == nil, b == UInt8(ascii: ":") { colon = i }
        }
        guard let colon else { return nil }
        // The scheme is compared ignoring ASCII case (b | 0x20 maps only a letter's two cases onto its lower case).
        func schemeIs(_ name: StaticString) -> Bool {
            guard colon == name.utf8CodeUnitCount else { return false }
            let expected = name.utf8Start
            for i in 0..<colon where bytes[i] | 0x20 != expected[i] { return false }
            return true
        }
        let scheme: String
        if schemeIs("http") {
            scheme = "http"
        } else if schemeIs("https") {
            scheme = "https"
        } else if anyScheme, isSchemeName(bytes, colon) {
            scheme = part(0, colon).lowercased()
        } else {
            return nil
        }
        let isHTTP = scheme == "http" || scheme == "https"
        guard count - colon > 2, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            guard !isHTTP else { return nil }
            // No authority (`data:,x`): the rest, up to a fragment, is the "path". A single `/` after the colon
            // would read back as an authority: refused.
            let end = bytes[(colon + 1)...].firstIndex(of: UInt8(ascii: "#")) ?? count
            guard colon + 1 == end || bytes[colon + 1] != UInt8(ascii: "/") else { return nil }
            return HTTPURL(opaque: scheme, part(colon + 1, end))
        }
        let start = colon + 3
        // A slice of the buffer keeps the buffer's offsets: every index found below is one into `bytes`.
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? count
        let authorityEnd = bytes[start..<end].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? end
        // userinfo is deprecated in http(s) URLs (RFC 9110 §4.2.4) and a classic phishing vector: refuse it.
        guard !bytes[start..<authorityEnd].contains(UInt8(ascii: "@")) else { return nil }
        let host: String
        var port: Int?
        if start < authorityEnd, bytes[start] == UInt8(ascii: "[") {
            guard let close = bytes[(start + 1)..<authorityEnd].firstIndex(of: UInt8(ascii: "]")) else { return nil }
            // RFC 3986 IP-literal: an IPv6 address only (a bracketed name or IPv4 address is not one).
            let literal = part(start + 1, close)
            guard IPv6Literal.isValid(literal) else { return nil }
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == UInt8(ascii: ":"), let p = parsePort(bytes, close + 2, authorityEnd) else { return nil }
                port = p
            }
            host = literal.utf8.contains(where: isUpperCaseLetter) ? literal.lowercased() : literal
        } else {
            var hostEnd = authorityEnd
            if let colon = bytes[start..<authorityEnd].lastIndex(of: UInt8(ascii: ":")) {
                guard let p = parsePort(bytes, colon + 1, authorityEnd) else { return nil }
                (hostEnd, port) = (colon, p)
            }
            // Only a plugin's scheme may have an empty host (`file:///x`), and then no port.
            guard hostEnd > start || (!isHTTP && port == nil) else { return nil }
            var upper = false
            for i in start..<hostEnd {
                guard isRegNameByte(bytes[i]) else { return nil }
                if isUpperCaseLetter(bytes[i]) { upper = true }
            }
            // Lower-cased only when it has upper-case letters (a host that parses is ASCII).
            host = upper ? part(start, hostEnd).lowercased() : part(start, hostEnd)
        }
        var query: String?
        var pathEnd = end
        if let q = bytes[authorityEnd..<end].firstIndex(of: UInt8(ascii: "?")) {
            query = part(q + 1, end)
            pathEnd = q
        }
        return HTTPURL(normalised: scheme, host: host, port: port, path: part(authorityEnd, pathEnd), query: query)
    }

    /// A port of 1 to 5 decimal digits, 1...65535, in `bytes[from..<to]`.
    private static func parsePort(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        guard to > from, to - from <= 5 else { return nil }
        var value = 0
        for i in from..<to {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value > 0 && value <= 65535 ? value : nil
    }

    /// RFC 3986's `scheme`: a letter, then letters, digits, `+`, `-` and `.`, in `bytes[0..<end]`.
    private static func isSchemeName(_ bytes: UnsafeBufferPointer<UInt8>, _ end: Int) -> Bool {
        guard end > 0, (bytes[0] | 0x20) >= UInt8(ascii: "a"), (bytes[0] | 0x20) <= UInt8(ascii: "z") else { return false }
        for i in 1..<end {
            let b = bytes[i]
            let letter = (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z")
            let other = (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
            guard letter || other else { return false }
        }
        return true
    }

    private static func isUpperCaseLetter(_ b: UInt8) -> Bool { b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") }

    /// A URL from parts already checked and lower-cased by ``parse(_:)``; `path` is not empty.
    private init(normalised scheme: String, host: String, port: Int?, path: String, query: String?) {
        self.scheme = scheme
        self.host = host
        self.explicitPort = port
        self.path = path.isEmpty ? "/" : path
        self.query = query
    }

    /// A URL without an authority: `rest` is what follows the scheme's colon (never starting with `/`).
    private init(opaque scheme: String, _ rest: String) {
        self.scheme = scheme
        self.host = ""
        self.explicitPort = nil
        self.path = rest
        self.query = nil
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
