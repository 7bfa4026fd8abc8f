/// RFC 3986 `IPv6address` syntax (§3.2.2), ASCII only: eight groups of one to four hex digits separated by
/// colons, one `::` standing for one or more zero groups, and optionally a dotted-quad IPv4 address in place of
/// the last two groups. No zone identifiers, no `IPvFuture`.
///
/// Checked byte by byte: `Character.isHexDigit` also accepts full-width digits, which once let `http://[１]/`
/// parse to a host whose description did not parse again.
package enum IPv6Literal {
    /// Whether `text` (without brackets) is an IPv6 address.
    package static func isValid(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        // The longest form is 8 groups of 4 with an IPv4 tail: 45 bytes.
        guard !bytes.isEmpty, bytes.count <= 45 else { return false }
        var doubleColon: Int?
        for i in 0..<(bytes.count - 1) where bytes[i] == colon && bytes[i + 1] == colon {
            if doubleColon != nil { return false }  // a second '::', or ':::'
            doubleColon = i
        }
        guard let elided = doubleColon else { return groupCount(bytes[...]) == 8 }
        guard let head = groupCount(bytes[..<elided], ipv4Tail: false), let tail = groupCount(bytes[(elided + 2)...]) else {
            return false
        }
        return head + tail <= 7
    }

    private static let colon = UInt8(ascii: ":")

    /// How many 16-bit groups `part` spells (an IPv4 tail counts two), or nil if it is malformed.
    private static func groupCount(_ part: ArraySlice<UInt8>, ipv4Tail: Bool = true) -> Int? {
        if part.isEmpty { return 0 }
        let pieces = part.split(separator: colon, omittingEmptySubsequences: false)
        var count = 0
        for (index, piece) in pieces.enumerated() {
            if ipv4Tail, index == pieces.count - 1, piece.contains(UInt8(ascii: ".")) {
                guard isIPv4(piece) else { return nil }
                count += 2
            } else {
                guard (1...4).contains(piece.count), piece.allSatisfy(isHexDigit) else { return nil }
                count += 1
            }
        }
        return count
    }

    /// RFC 3986 `IPv4address`: four `dec-octet`s, 0-255 without leading zeros.
    private static func isIPv4(_ bytes: ArraySlice<UInt8>) -> Bool {
        let octets = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return octets.count == 4
            && octets.allSatisfy { octet in
                guard (1...3).contains(octet.count), octet.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
                if octet.count > 1 && octet.first == 0x30 { return false }
                return octet.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 255
            }
    }

    private static func isHexDigit(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x46, 0x61...0x66: return true
        default: return false
        }
    }
}
