/// A host a service claims: an exact name or address (`api.example.com`, `192.0.2.10`, `::1`), or a wildcard
/// `*.example.com`, which matches any host with one or more labels in front of `example.com` but not
/// `example.com` itself.
///
/// Precedence when several services could match a host (see docs/policy.md): an exact pattern always wins;
/// among wildcards, the one with the longest suffix (most labels) wins.
public struct HostPattern: Hashable, Sendable, CustomStringConvertible {
    /// The exact host, or for a wildcard the suffix after `*.`; lower case.
    public let name: String
    /// Whether this is a `*.suffix` pattern.
    public let isWildcard: Bool

    /// Parses a pattern; returns nil and the reason when it is malformed.
    package static func parse(_ text: String) -> Result<HostPattern, HostPatternError> {
        let lower = text.lowercased()
        if lower.hasPrefix("*.") {
            let suffix = String(lower.dropFirst(2))
            if let problem = HostPattern.problem(inHostName: suffix) { return .failure(problem) }
            if HostPattern.isIPLiteral(suffix) { return .failure(.init(reason: "a wildcard cannot cover an IP address")) }
            if !suffix.contains(".") {
                return .failure(.init(reason: "a wildcard must cover at least two labels ('*.example.com', not '*.com')"))
            }
            return .success(HostPattern(name: suffix, isWildcard: true))
        }
        if lower.contains("*") {
            return .failure(.init(reason: "'*' is allowed only as the whole first label, as in '*.example.com'"))
        }
        if HostPattern.isIPLiteral(lower) { return .success(HostPattern(name: lower, isWildcard: false)) }
        if let problem = HostPattern.problem(inHostName: lower) { return .failure(problem) }
        return .success(HostPattern(name: lower, isWildcard: false))
    }

    public init(name: String, isWildcard: Bool) {
        self.name = name.lowercased()
        self.isWildcard = isWildcard
    }

    /// Whether this pattern matches `host` (already lower case).
    public func matches(_ host: String) -> Bool {
        if !isWildcard { return host == name }
        return host.count > name.count + 1 && host.hasSuffix("." + name)
    }

    public var description: String { isWildcard ? "*.\(name)" : name }

    /// Whether `host` is an IPv4 dotted quad or an IPv6 literal (no brackets).
    ///
    /// A dotted quad is four parts of one to three ASCII digits, each at most 255 (leading zeros allowed). Read
    /// byte by byte: every new TLS connection asks (SNI is for names only), and the `Character` version cost
    /// 0.7% of a resumed handshake.
    public static func isIPLiteral(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return IPv6Literal.isValid(host) }
        var dots = 0
        var digits = 0
        var value = 0
        for byte in host.utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard digits > 0, dots < 3 else { return false }
                dots += 1
                digits = 0
                value = 0
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return false }
            default:
                return false
            }
        }
        return dots == 3 && digits > 0
    }

    /// RFC 1123 host name checks: labels of 1–63 letters, digits and hyphens, not starting or ending with a
    /// hyphen, 253 characters at most.
    static func problem(inHostName host: String) -> HostPatternError? {
        if host.isEmpty { return .init(reason: "the host is empty") }
        if host.utf8.count > 253 { return .init(reason: "the host is longer than 253 characters") }
        for label in host.split(separator: ".", omittingEmptySubsequences: false) {
            if label.isEmpty { return .init(reason: "the host has an empty label ('..' or a leading or trailing dot)") }
            if label.utf8.count > 63 {
                // Quoted shortened: the label may be any length, and an alias may repeat it.
                let shown = label.prefix(57)
                return .init(reason: "the label '\(shown)\(shown.endIndex < label.endIndex ? "..." : "")' is longer than 63 characters")
            }
            if label.hasPrefix("-") || label.hasSuffix("-") {
                return .init(reason: "the label '\(label)' starts or ends with '-'")
            }
            if let bad = label.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-")) }) {
                return .init(reason: "'\(bad)' is not allowed in a host name")
            }
        }
        return nil
    }
}

/// Why a host pattern is malformed.
package struct HostPatternError: Error, Hashable, Sendable, CustomStringConvertible {
    package var reason: String
    package init(reason: String) { self.reason = reason }
    package var description: String { reason }
}
