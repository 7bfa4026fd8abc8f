/// Why bytes from a Redis server are not RESP, or are more than the parser's limits allow. The connection that
/// received them is out of step and must be closed.
package struct RESPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// A type byte RESP does not define (or one this parser does not support: attributes, streamed strings).
        case unknownType(UInt8)
        /// A line of a header or a simple value is not what its type allows: an empty or malformed number, a
        /// bad boolean or double, a null with text after it.
        case malformedLine
        /// A line ends in a bare `\n`, or holds a `\r` that does not end it.
        case strayLineBreak
        /// A bulk value is not followed by `\r\n`.
        case missingTerminator
        /// A length below -1, or -1 where no null is allowed.
        case negativeLength(Int64)
        /// A bulk value longer than ``RESPParser/Limits/maxBulkLength``.
        case bulkTooLong(Int64)
        /// An aggregate with more elements than ``RESPParser/Limits/maxAggregateLength``.
        case aggregateTooLong(Int64)
        /// Aggregates nested deeper than ``RESPParser/Limits/maxDepth``.
        case tooDeep
        /// A line longer than ``RESPParser/Limits/maxLineLength`` without its `\r\n`.
        case lineTooLong
    }

    package let kind: Kind
    /// The offset in the stream (bytes fed since the parser was made) where the faulty item starts.
    package let offset: Int

    package init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    package var description: String {
        let what: String
        switch kind {
        case .unknownType(let byte): what = "unknown type byte 0x\(String(byte, radix: 16))"
        case .malformedLine: what = "a malformed line"
        case .strayLineBreak: what = "a line break that is not CRLF"
        case .missingTerminator: what = "a bulk value not ended by CRLF"
        case .negativeLength(let length): what = "the invalid length \(length)"
        case .bulkTooLong(let length): what = "a bulk value of \(length) bytes, over the limit"
        case .aggregateTooLong(let count): what = "an aggregate of \(count) elements, over the limit"
        case .tooDeep: what = "aggregates nested deeper than the limit"
        case .lineTooLong: what = "a line over the length limit"
        }
        return "RESP: \(what) at byte \(offset)"
    }
}
