internal import CourierCore

/// One HTTP/1.1 request the demo upstream received (from its ``MockServer``): the request line, the header fields
/// and the body, as the script reads them.
struct UpstreamRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    var method: String
    /// The origin-form request target, e.g. `/search?q=1`.
    var target: String
    var headers: HTTPHeaders
    var body: [UInt8]

    /// The target without its query.
    var path: String {
        target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
    }

    /// The `Host` header, empty when there is none.
    var host: String { headers["host"] ?? "" }

    /// The request line, for notes: `GET /search?q=1`.
    var line: String { "\(method) \(target)" }

    /// The body as `application/x-www-form-urlencoded` pairs (`+` is a space, `%XX` escapes decoded); pairs that
    /// do not decode are left out.
    var formFields: [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = UpstreamRequest.decodeFormComponent(parts[0]) else { continue }
            let value = parts.count > 1 ? UpstreamRequest.decodeFormComponent(parts[1]) : ""
            if let value { fields[name] = value }
        }
        return fields
    }

    static func decodeFormComponent(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else {
                    return nil
                }
                out.append(hi << 4 | lo)
                i += 2
            } else {
                out.append(b)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
