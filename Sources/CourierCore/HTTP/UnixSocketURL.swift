/// The `http+unix://` and `https+unix://` URL forms (AsyncHTTPClient's, requests-unixsocket's): the socket path,
/// percent-encoded, as the host, `http+unix://%2Frun%2Fdocker.sock/v1.43/info`. The request goes to the socket,
/// and its URL is the http(s) one with `localhost` as the host (what its `Host` field says).
package enum UnixSocketURL {
    /// The socket path and the request's URL; nil when `text` is not of that form, the path is not absolute or
    /// relative text after decoding, or what follows the host is not a valid URL's path and query.
    package static func parse(_ text: String) -> (socketPath: String, url: HTTPURL)? {
        let lower = text.prefix(14).lowercased()
        let scheme: String
        if lower.hasPrefix("http+unix://") {
            scheme = "http"
        } else if lower.hasPrefix("https+unix://") {
            scheme = "https"
        } else {
            return nil
        }
        let rest = text.dropFirst(scheme.count + "+unix://".count)
        let hostEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let path = percentDecoded(rest[..<hostEnd]), !path.isEmpty, !path.utf8.contains(0) else { return nil }
        let tail = rest[hostEnd...]
        guard let url = HTTPURL("\(scheme)://localhost\(tail.hasPrefix("/") || tail.isEmpty ? "" : "/")\(tail)") else { return nil }
        return (path, url)
    }

    /// `%XX` escapes decoded (as UTF-8); nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
