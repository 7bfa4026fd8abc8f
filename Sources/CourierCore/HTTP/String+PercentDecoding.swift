extension StringProtocol {
    /// The text with `%XX` escapes decoded (RFC 3986 §2.1), as UTF-8 (invalid sequences become U+FFFD); nil for a
    /// `%` not followed by two hex digits. How URL userinfo is read (a proxy's, a Redis URL's).
    package var percentDecoded: String? {
        percentDecodedBytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes the text stands for with `%XX` escapes decoded (RFC 3986 §2.1); nil for a `%` not followed by two
    /// hex digits. A `data:` URL's payload, which may be any bytes.
    package var percentDecodedBytes: [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next() else { return nil }
            let pair = String(decoding: [high, low], as: UTF8.self)
            guard pair.allSatisfy(\.isHexDigit), let value = UInt8(pair, radix: 16) else { return nil }
            bytes.append(value)
        }
        return bytes
    }
}
