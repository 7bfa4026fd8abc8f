/// RFC 9110 §5.6.1 lists (`#element`), as every list-valued field is read (`Connection`, `Content-Encoding` through
/// ``HTTPHeaders/tokens(for:)``; the cache's `Vary`, `Age` and a qualified `no-cache="…"`): split at every comma, the optional whitespace around each element removed, empty elements
/// dropped.
///
/// Read over UTF-8 bytes, as the grammar is written: a comma followed by a combining mark still ends an element,
/// though Swift's `split` on `Character`s would see one character and not split there (and then a round trip
/// through `", ".joined` would change the list). Elements are returned as they were sent, not lower-cased.
package enum HTTPList {
    /// The elements of `value`, in order.
    package static func elements(of value: some StringProtocol) -> [String] {
        var result: [String] = []
        var utf8 = Substring(value).utf8[...]
        while !utf8.isEmpty {
            let end = utf8.firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
            let element = trimmingWhitespace(utf8[..<end])
            if !element.isEmpty { result.append(String(decoding: element, as: UTF8.self)) }
            utf8 = end == utf8.endIndex ? utf8[end...] : utf8[utf8.index(after: end)...]
        }
        return result
    }

    /// The first element of `value` as written (trimmed, possibly empty), or nil when `value` is empty.
    package static func firstElement(of value: some StringProtocol) -> String? {
        let utf8 = Substring(value).utf8
        guard !utf8.isEmpty else { return nil }
        let end = utf8.firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
        return String(decoding: trimmingWhitespace(utf8[..<end]), as: UTF8.self)
    }

    /// `bytes` without leading and trailing spaces and tabs (RFC 9110's OWS).
    package static func trimmingWhitespace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        let isWhitespace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }) else { return bytes[bytes.endIndex...] }
        let last = bytes.lastIndex(where: { !isWhitespace($0) })!
        return bytes[first...last]
    }
}
