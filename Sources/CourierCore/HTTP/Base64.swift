/// Standard base64 (RFC 4648 §4) with padding, for pins and basic credentials; no Foundation needed.
///
/// Kept rather than replaced (issue 11): swift-collections has no base64, a library may not add other packages,
/// and libcrypto's `EVP_DecodeBlock` is not as strict as a pin check needs. Tried through Python's ctypes on the
/// system's OpenSSL 3: it accepts `" QUJD "` and `"QUJD\n"` (trims whitespace), `"QU=D"` (padding in the middle,
/// decoding to garbage), `"===="` and `"QUJD===="`, and counts padding in its length (`"QQ=="` gives 3 bytes, the
/// last two zeros), so a wrapper would have to re-check every rule this decoder checks. Nor is it on a hot path
/// where speed could argue for the switch: it decodes pins when a policy compiles and encodes one header per
/// `basic` or HMAC authorisation, so no benchmark was run for it.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = input.count - i
        if rest == 1 {
            let n = UInt32(input[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded standard base64; nil for anything malformed (wrong length, bad characters, bad padding).
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            var n: UInt32 = 0
            var pad = 0
            for j in 0..<4 {
                let c = chars[i + j]
                let v: UInt32
                switch c {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - 65)
                case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - 97 + 26)
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - 48 + 52)
                case UInt8(ascii: "+"): v = 62
                case UInt8(ascii: "/"): v = 63
                case UInt8(ascii: "=") where i + 4 == chars.count && j >= 2:
                    v = 0
                    pad += 1
                default: return nil
                }
                if pad > 0 && c != UInt8(ascii: "=") { return nil }
                n = n << 6 | v
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if pad < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
