internal import CourierCore

/// A `Content-Range: bytes first-last/complete` (RFC 9110 §14.4), `complete` being nil for `*`.
struct ContentRange: Equatable, Sendable {
    var first: Int64
    var last: Int64
    var complete: Int64?

    init(first: Int64, last: Int64, complete: Int64?) {
        (self.first, self.last, self.complete) = (first, last, complete)
    }

    /// Parses the field's value; nil for anything but a satisfied byte range (`bytes */length` included).
    init?(_ text: String) {
        let value = text.trimmingHTTPWhitespace
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst("bytes ".count)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last else { return nil }
        if halves[1] == "*" {
            complete = nil
        } else {
            guard let length = Self.number(halves[1]), last < length else { return nil }
            complete = length
        }
        (self.first, self.last) = (first, last)
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
