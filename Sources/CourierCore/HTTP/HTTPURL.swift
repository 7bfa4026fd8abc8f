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
    package var explicitPort: Int?
    /// The path, always starting with `/` (an empty path becomes `/`), still percent-encoded.
    public var path: String
    /// The query without its `?`, still percent-encoded; nil when the URL has none.
    public var query: String?

    /// The port to connect to: the explicit one, else 443 for https and 80 for http.
    public var port: Int { explicitPort ?? (scheme == "https" ? 443 : 80) }

    /// Whether the host is an IPv6 address literal.
    package var isIPv6Literal: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// The request target of an origin-form request line: path plus `?query`.
    public var requestTarget: String { query.map { "\(path)?\($0)" } ?? path }

    /// The `Host` header value: host (bracketed for IPv6) plus `:port` when it is not the scheme's default.
    package var hostHeader: String {
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
    package var firstPathComponent: String { String(path[..<firstPathComponentEnd]) }

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
        guard let parsed = HTTPURL.parse(string) else { return nil }
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

    /// Parses `string`'s UTF-8 bytes in place, by offset: every delimiter is ASCII, so each part cut at one is
    /// valid UTF-8 on its own and becomes a `String` with no checks beyond a copy. (Searching through
    /// `Substring.UTF8View` indices cost about 1.5 µs per URL, a fiftieth of a whole load through the loader.)
    private static func parse(_ string: String) -> HTTPURL? {
        var string = string
        return string.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> HTTPURL? {
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
        } else {
            return nil
        }
        guard count - colon > 2, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else {
            return nil
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
            guard hostEnd > start else { return nil }
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

    private static func isUpperCaseLetter(_ b: UInt8) -> Bool { b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") }

    /// A URL from parts already checked and lower-cased by ``parse(_:)``; `path` is not empty.
    private init(normalised scheme: String, host: String, port: Int?, path: String, query: String?) {
        self.scheme = scheme
        self.host = host
        self.explicitPort = port
        self.path = path.isEmpty ? "/" : path
        self.query = query
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
