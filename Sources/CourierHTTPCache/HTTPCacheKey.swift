package import CourierCore

/// Where a response is filed in the record store (RFC 9111 §4.1): the primary key is the method (a `HEAD` reads
/// what a `GET` stored), the URL and whose credentials asked; each variant of it adds the values the request
/// had for the header fields the response's `Vary` names.
///
/// Two record keys per URL: ``varyIndex`` holds the `Vary` field names last seen for the primary key (so a lookup
/// knows which request fields to compare before it knows the response), and ``variant(varyNames:request:)``
/// the response itself.
package struct HTTPCacheKey: Hashable, Sendable {
    /// `GET https://host:port/path?query`, and `#identity` when the request carried credentials.
    package let primary: String

    /// - Parameters:
    ///   - method: the request's method; `HEAD` files under `GET`.
    ///   - url: the request's URL, normalised (lower-case scheme and host as ``HTTPURL`` parses them, the
    ///     default port dropped), so `https://Host:443/a` and `https://host/a` share an entry.
    ///   - identity: who the credentials belong to (an authoriser and the factory's user), so that two users'
    ///     authorised responses are never shared; nil for a request without credentials.
    package init(method: HTTPMethod, url: HTTPURL, identity: String?) {
        let filedMethod = method == .head ? HTTPMethod.get : method
        var key = "\(filedMethod) \(url.scheme)://\(url.hostHeader)\(url.requestTarget)"
        if let identity { key += " #" + identity }
        primary = key
    }

    /// The record key of the `Vary` index of this URL.
    package var varyIndex: String { "vary " + primary }

    /// The record key of the variant that `request`'s fields select, for the field names a `Vary` gave: names
    /// compared case-insensitively, in sorted order; values as sent, comma-joined when repeated, with their
    /// surrounding white space removed (RFC 9111 §4.1: "normalizing both header field values in a way that is
    /// known to have identical semantics" — only white space is normalised here).
    package func variant(varyNames: [String], request: HTTPHeaders) -> String {
        let names = Set(varyNames.map { $0.lowercased() }).sorted()
        guard !names.isEmpty else { return primary }
        let selected = names.map { name -> String in
            let values = request.values(for: name).map { String($0.trimmingHTTPWhitespace) }
            return name + "=" + (values.isEmpty ? "\u{0}" : values.joined(separator: ","))
        }
        return primary + " vary " + selected.joined(separator: "\u{1F}")
    }

    /// The `Vary` field names of a response (RFC 9110 §12.5.5: `#( "*" / field-name )`), lower case, each once,
    /// sorted; `*` included as is (such a response is never stored). The list is split at commas as bytes
    /// (``HTTPList``). A member that is not a token is dropped: no request Courier sends can hold a field of that
    /// name (the transport refuses such names), so it would select the same variant for every request, and
    /// dropping it keeps names with CR, LF or the key's separators out of the record keys and the `Vary` index.
    package static func varyNames(of headers: HTTPHeaders) -> [String] {
        var names = Set<String>()
        for value in headers.values(for: "vary") {
            for member in HTTPList.elements(of: value) where member == "*" || HTTPToken.isToken(member) {
                names.insert(String(decoding: member.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self))
            }
        }
        return names.sorted()
    }
}
