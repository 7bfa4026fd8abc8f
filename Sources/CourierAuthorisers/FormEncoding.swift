/// `application/x-www-form-urlencoded` (WHATWG URL §5, as RFC 6749 Appendix B uses it) and RFC 3986
/// percent-encoding for query items.
enum FormEncoding {
    /// `name=value&…`, each part form-encoded (space as `+`).
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(component($0.0, spaceAsPlus: true))=\(component($0.1, spaceAsPlus: true))" }.joined(separator: "&")
    }

    /// Percent-encodes every byte except RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`).
    static func component(_ text: String, spaceAsPlus: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(b)
            case UInt8(ascii: " ") where spaceAsPlus:
                out.append(UInt8(ascii: "+"))
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
