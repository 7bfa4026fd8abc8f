/// A single `Range: bytes=…` request (RFC 9110 §14.1.2) applied to a representation of a known size. Pure.
package enum ByteRange: Hashable, Sendable {
    /// The satisfiable part, clipped to the size: send `206` with `Content-Range: bytes first-last/size`.
    case partial(Range<Int>)
    /// Nothing of the representation is in the range: send `416` with `Content-Range: bytes */size`.
    case unsatisfiable
    /// No range to honour (no field, another unit, a syntax error, or several ranges): send the whole, `200`.
    case whole

    /// What `field` (the `Range` field's value, or nil) asks of a representation of `size` bytes. `first-last`,
    /// `first-` and `-suffix` are honoured; a list of several ranges is answered whole (RFC 9110 lets a server
    /// ignore `Range`; a plugin has no multipart/byteranges).
    package init(_ field: String?, size: Int) {
        guard let field else {
            self = .whole
            return
        }
        let value = field.trimmingHTTPWhitespace
        guard value.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = value.dropFirst(6).trimmingHTTPWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let (start, end) = (spec[..<dash], spec[spec.index(after: dash)...])
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int(text) ?? Int.max  // more digits than an Int holds: beyond any file
        }
        if start.isEmpty {
            guard let suffix = number(end) else {
                self = .whole
                return
            }
            self = suffix == 0 || size == 0 ? .unsatisfiable : .partial(max(0, size - suffix)..<size)
            return
        }
        guard let first = number(start) else {
            self = .whole
            return
        }
        let last: Int
        if end.isEmpty {
            last = Int.max
        } else {
            guard let given = number(end), given >= first else {
                self = .whole
                return
            }
            last = given
        }
        self = first >= size ? .unsatisfiable : .partial(first..<(min(last, size - 1) + 1))
    }
}
