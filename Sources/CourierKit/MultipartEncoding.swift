/// The bytes around a multipart form's parts (RFC 7578 and RFC 2046 §5.1.1), with no I/O: each part's boundary line
/// and header fields, the closing delimiter, and the boundary check.
enum MultipartEncoding {
    /// `--boundary`, the part's `Content-Disposition` (and `Content-Type` when set), and the blank line. Names and
    /// file names are quoted, with `"`, CR and LF percent-encoded as browsers do (RFC 7578 §4.2 leaves it open; a
    /// raw one would end the field).
    static func preamble(_ part: MultipartFormData.Part, boundary: String) -> [UInt8] {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(part.name))\""
        if let filename = part.filename { text += "; filename=\"\(escaped(filename))\"" }
        text += "\r\n"
        if let type = part.contentType { text += "Content-Type: \(type.filter { $0 != "\r" && $0 != "\n" })\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The end of the body: `--boundary--`.
    static func closing(boundary: String) -> [UInt8] {
        Array("--\(boundary)--\r\n".utf8)
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            case "\r\n": out += "%0D%0A"
            default: out.append(character)
            }
        }
        return out
    }

    /// Whether `bytes` hold `--boundary`.
    static func contains(_ haystack: [UInt8], boundary: String) -> Bool {
        let needle = Array("--\(boundary)".utf8)
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
