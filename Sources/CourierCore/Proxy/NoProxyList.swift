internal import Glibc

/// A `no_proxy` list (curl's `--noproxy`, the `no_proxy` variable, the policy's `proxy: { no-proxy }`): the hosts
/// reached directly even though a proxy is set. Entries are separated by commas (spaces around them ignored):
///
/// - `*` alone: every host;
/// - a host name (a leading dot and a trailing dot ignored): that host and every name under it at a dot boundary
///   (`example.com` matches `example.com` and `www.example.com`, never `notexample.com`), as curl 7.87 and later;
/// - an IP address: that address exactly; with `/bits`, every address in that CIDR range (IPv4 or IPv6; `/0`
///   is the whole address, as in curl);
/// - any of these with `:port` (`[v6]:port` for an IPv6 address): only requests to that port.
///
/// Matching is on the URL's host as written (lower case), never on an address it resolves to.
package struct NoProxyList: Hashable, Sendable, CustomStringConvertible {
    package enum Entry: Hashable, Sendable {
        case everything
        case domain(String, port: Int?)
        case network([UInt8], bits: Int, port: Int?)
    }

    package let entries: [Entry]
    /// The list as given.
    package let text: String

    package init(_ text: String) {
        self.text = text
        var entries: [Entry] = []
        for raw in text.split(separator: ",") {
            let item = raw.trimmingHTTPWhitespace
            if item.isEmpty { continue }
            if item == "*" {
                entries.append(.everything)
                continue
            }
            if let entry = Self.entry(String(item).lowercased()) { entries.append(entry) }
        }
        self.entries = entries
    }

    package init(_ list: [String]) { self.init(list.joined(separator: ",")) }

    package var isEmpty: Bool { entries.isEmpty }

    package var description: String { text }

    /// Whether `host` (an IP literal without brackets, or a name) on `port` is to be reached directly.
    package func matches(host: String, port: Int) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") && name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        while name.hasSuffix(".") { name = name.dropLast() }
        let address = Self.addressBytes(String(name))
        for entry in entries {
            switch entry {
            case .everything:
                return true
            case .domain(let domain, let only):
                if let only, only != port { continue }
                if name == domain { return true }
                if name.hasSuffix(domain), name.dropLast(domain.count).hasSuffix(".") { return true }
            case .network(let network, let bits, let only):
                if let only, only != port { continue }
                if let address, address.count == network.count, Self.prefixMatches(address, network, bits: bits) { return true }
            }
        }
        return false
    }

    /// One entry, or nil when it can match nothing (a CIDR suffix beyond the address's width, a bad port).
    private static func entry(_ item: String) -> Entry? {
        var text = Substring(item)
        var port: Int?
        if text.hasPrefix("[") {  // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = Int(rest.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard let p = Int(text[text.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
            text = text[..<colon]
        }
        var bits: Int?
        if let slash = text.firstIndex(of: "/") {
            guard let b = Int(text[text.index(after: slash)...]), b >= 0 else { return nil }
            bits = b
            text = text[..<slash]
        }
        if let address = addressBytes(String(text)) {
            let width = address.count * 8
            // `/0` means the whole address, as in curl (Curl_cidr4_match), not "every address".
            let prefix = bits.flatMap { $0 == 0 ? nil : $0 } ?? width
            guard prefix <= width else { return nil }
            return .network(address, bits: prefix, port: port)
        }
        guard bits == nil else { return nil }  // a CIDR suffix on a name
        while text.hasPrefix(".") { text = text.dropFirst() }
        while text.hasSuffix(".") { text = text.dropLast() }
        guard !text.isEmpty else { return nil }
        return .domain(String(text), port: port)
    }

    /// The address's bytes (4 or 16) when `text` is an IPv4 or IPv6 literal.
    private static func addressBytes(_ text: String) -> [UInt8]? {
        guard HostPattern.isIPLiteral(text) else { return nil }
        let isV6 = text.utf8.contains(UInt8(ascii: ":"))
        var bytes = [UInt8](repeating: 0, count: isV6 ? 16 : 4)
        let parsed = bytes.withUnsafeMutableBytes { inet_pton(isV6 ? AF_INET6 : AF_INET, text, $0.baseAddress) }
        return parsed == 1 ? bytes : nil
    }

    private static func prefixMatches(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        var left = bits
        var index = 0
        while left >= 8 {
            if a[index] != b[index] { return false }
            index += 1
            left -= 8
        }
        guard left > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - left))
        return a[index] & mask == b[index] & mask
    }
}
