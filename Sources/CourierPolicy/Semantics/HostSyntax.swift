internal import CourierCore

/// Host patterns and fallback addresses as the policy language writes them, with a byte-level fast path for
/// the common case (plain ASCII host names), which a 10,000-service policy has 30,000 of. Anything unusual
/// goes to ``HostPattern/parse(_:)`` / ``HostAddress/parse(_:)``, which stay the definition.
enum HostSyntax {
    /// A host pattern; an IPv6 literal may be written in brackets (`[::1]`), as in URLs.
    static func pattern(_ text: String) -> Result<HostPattern, HostPatternError> {
        if let fast = fastPattern(text) { return .success(fast) }
        if text.hasPrefix("[") && text.hasSuffix("]") {
            let inner = String(text.dropFirst().dropLast())
            guard inner.contains(":"), HostPattern.isIPLiteral(inner) else {
                return .failure(HostPatternError(reason: "'[...]' holds an IPv6 address only"))
            }
            return .success(HostPattern(name: inner, isWildcard: false))
        }
        return HostPattern.parse(text)
    }

    /// A fallback address: `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal.
    static func address(_ text: String) -> HostAddress? {
        if !text.utf8.contains(UInt8(ascii: ":")), let name = validHostName(text.utf8[...]) {
            return HostAddress(host: name)
        }
        return HostAddress.parse(text)
    }

    /// The pattern when `text` is a plain RFC 1123 name or `*.` plus one with two labels or more (and not an
    /// IPv4 address); nil means "not sure, take the slow path".
    private static func fastPattern(_ text: String) -> HostPattern? {
        let utf8 = text.utf8
        if utf8.starts(with: "*.".utf8) {
            let suffix = utf8.dropFirst(2)
            guard suffix.contains(UInt8(ascii: ".")), let name = validHostName(suffix), !looksNumeric(suffix) else { return nil }
            return HostPattern(name: name, isWildcard: true)
        }
        guard let name = validHostName(utf8[...]) else { return nil }
        return HostPattern(name: name, isWildcard: false)
    }

    /// The lower-cased name when every label is 1-63 letters, digits or inner hyphens and the whole is at most
    /// 253 bytes; else nil.
    private static func validHostName(_ bytes: Substring.UTF8View) -> String? {
        guard !bytes.isEmpty, bytes.count <= 253 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var labelLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(b)
                labelLength += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                out.append(b | 0x20)
                labelLength += 1
            case UInt8(ascii: "-"):
                guard previous != UInt8(ascii: ".") else { return nil }
                out.append(b)
                labelLength += 1
            case UInt8(ascii: "."):
                guard labelLength > 0, previous != UInt8(ascii: "-") else { return nil }
                out.append(b)
                labelLength = 0
            default:
                return nil
            }
            guard labelLength <= 63 else { return nil }
            previous = b
        }
        guard labelLength > 0, previous != UInt8(ascii: "-") else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static func looksNumeric(_ bytes: Substring.UTF8View) -> Bool {
        bytes.allSatisfy { $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
