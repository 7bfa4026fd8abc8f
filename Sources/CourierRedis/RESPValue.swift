/// One reply (or one element of a reply) of the Redis serialisation protocol, RESP2 and RESP3.
///
/// RESP2's null bulk string (`$-1`) and null array (`*-1`) and RESP3's null (`_`) are all ``null``. Attributes
/// (RESP3 `|`) and streamed strings (`$?`) are not supported: the client speaks RESP2, where they never come, and
/// the parser refuses them as a protocol error.
package enum RESPValue: Sendable, Equatable {
    /// `+OK`: a line of text.
    case simpleString(String)
    /// `-ERR message`: an error reply, whole (its first word is the error's code).
    case error(String)
    /// `:42`.
    case integer(Int64)
    /// `$3\r\nfoo`: binary-safe bytes.
    case bulkString([UInt8])
    /// `$-1`, `*-1` (RESP2) or `_` (RESP3).
    case null
    /// `*2\r\n…`.
    case array([RESPValue])
    /// RESP3 `#t` / `#f`.
    case boolean(Bool)
    /// RESP3 `,3.14` (also `inf`, `-inf`, `nan`).
    case double(Double)
    /// RESP3 `(12345678901234567890`: an integer of any size, kept as its digits (and sign).
    case bigNumber(String)
    /// RESP3 `!len`: an error with a binary-safe message.
    case blobError([UInt8])
    /// RESP3 `=len\r\ntxt:…`: text with a three-letter format (`txt`, `mkd`).
    case verbatimString(format: String, text: [UInt8])
    /// RESP3 `%n`: key-value pairs, in the order sent.
    case map([RESPMapEntry])
    /// RESP3 `~n`.
    case set([RESPValue])
    /// RESP3 `>n`: out-of-band data (pub/sub messages, invalidations).
    case push([RESPValue])

    /// The text of a simple, bulk or verbatim string (invalid UTF-8 replaced); nil for other kinds.
    package var string: String? {
        switch self {
        case .simpleString(let text): return text
        case .bulkString(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .verbatimString(_, let text): return String(decoding: text, as: UTF8.self)
        default: return nil
        }
    }

    /// The bytes of a bulk or verbatim string (a simple string's UTF-8); nil for other kinds.
    package var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): return bytes
        case .verbatimString(_, let text): return text
        case .simpleString(let text): return Array(text.utf8)
        default: return nil
        }
    }

    /// The value of an integer reply; nil for other kinds.
    package var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements of an array, set or push; nil for other kinds.
    package var elements: [RESPValue]? {
        switch self {
        case .array(let elements), .set(let elements), .push(let elements): return elements
        default: return nil
        }
    }

    /// The message of an error reply (simple or blob); nil for other kinds.
    package var errorMessage: String? {
        switch self {
        case .error(let message): return message
        case .blobError(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: return nil
        }
    }
}
