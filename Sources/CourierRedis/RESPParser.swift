/// An incremental parser of Redis replies (RESP2 and RESP3): bytes in, in pieces split anywhere, whole replies out.
///
/// A state machine with no I/O and no clock: ``feed(_:)`` appends what arrived, ``next()`` returns the next
/// complete reply, or nil until more bytes arrive. Aggregates are built as their elements arrive (a stack of
/// frames), so a large reply fed in many pieces is parsed once, not again from its start on every feed. Lengths
/// are checked against ``Limits`` before anything is allocated for them, and an aggregate reserves room only for
/// what may plausibly follow, so a hostile header (`*2147483647`) costs nothing.
///
/// A malformed input throws ``RESPParseError``; the parser then stays failed (every later ``next()`` throws the
/// same error): the stream is out of step, and its connection must be closed.
package struct RESPParser: Sendable {
    /// Bounds on what one reply may hold.
    package struct Limits: Sendable, Equatable {
        /// The longest bulk value (`$`, `!`, `=`), in bytes. Redis's own default for a string is 512 MiB.
        package var maxBulkLength: Int
        /// The most elements one aggregate may announce (a map's pairs count twice).
        package var maxAggregateLength: Int
        /// How deeply aggregates may nest (an array of scalars is depth 1).
        package var maxDepth: Int
        /// The longest line (a header, a simple string or error): its type byte counts, its CRLF does not.
        package var maxLineLength: Int

        package init(maxBulkLength: Int = 64 << 20, maxAggregateLength: Int = 1 << 20, maxDepth: Int = 32, maxLineLength: Int = 64 << 10) {
            self.maxBulkLength = maxBulkLength
            self.maxAggregateLength = maxAggregateLength
            self.maxDepth = maxDepth
            self.maxLineLength = maxLineLength
        }
    }

    private enum AggregateKind { case array, set, push, map }

    /// An aggregate being filled.
    private struct Frame {
        var kind: AggregateKind
        /// Elements still to come (a map's keys and values both count).
        var remaining: Int
        var elements: [RESPValue]
    }

    /// A bulk header was read; its body (and CRLF) has not all arrived.
    private struct PendingBulk {
        var type: UInt8
        var length: Int
        var offset: Int
    }

    package let limits: Limits
    private var buffer: [UInt8] = []
    /// Where the unparsed bytes start in `buffer`.
    private var position = 0
    /// How many bytes after `position` are known to hold no `\n` (so a long line is scanned once).
    private var scanned = 0
    /// Bytes dropped from the front of `buffer` so far (for error offsets).
    private var discarded = 0
    private var stack: [Frame] = []
    private var bulk: PendingBulk?
    private var failure: RESPParseError?

    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet returned as replies.
    package var bufferedByteCount: Int { buffer.count - position }

    /// Whether a reply has begun and not ended (an aggregate or bulk value partly received, or a partial line).
    package var isMidReply: Bool { !stack.isEmpty || bulk != nil || bufferedByteCount > 0 }

    /// Appends bytes received from the server.
    package mutating func feed(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        if position > 0 && (position == buffer.count || position >= 64 << 10) {
            discarded += position
            buffer.removeSubrange(0..<position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or nil when more bytes are needed.
    ///
    /// - Throws: ``RESPParseError``, and the same error on every later call.
    package mutating func next() throws(RESPParseError) -> RESPValue? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            failure = error
            stack = []
            bulk = nil
            throw error
        }
    }

    private enum Item {
        /// A whole value: a scalar, a null, or an empty aggregate.
        case value(RESPValue)
        /// An aggregate's header: its elements follow.
        case opened
    }

    private mutating func parseNext() throws(RESPParseError) -> RESPValue? {
        while true {
            guard let item = try nextItem() else { return nil }
            guard case .value(var value) = item else { continue }
            // Add the value to the open aggregates, closing each that it completes.
            var complete = true
            while !stack.isEmpty {
                let top = stack.count - 1
                stack[top].elements.append(value)
                stack[top].remaining -= 1
                guard stack[top].remaining == 0 else {
                    complete = false
                    break
                }
                value = Self.close(stack.removeLast())
            }
            if complete { return value }
        }
    }

    private static func close(_ frame: Frame) -> RESPValue {
        switch frame.kind {
        case .array: return .array(frame.elements)
        case .set: return .set(frame.elements)
        case .push: return .push(frame.elements)
        case .map:
            var entries: [RESPMapEntry] = []
            entries.reserveCapacity(frame.elements.count / 2)
            var index = 0
            while index + 1 < frame.elements.count {
                entries.append(RESPMapEntry(key: frame.elements[index], value: frame.elements[index + 1]))
                index += 2
            }
            return .map(entries)
        }
    }

    /// The next value or aggregate header, or nil when its bytes have not all arrived.
    private mutating func nextItem() throws(RESPParseError) -> Item? {
        if let pending = bulk {
            guard buffer.count - position >= pending.length + 2 else { return nil }
            let start = position
            let end = start + pending.length
            guard buffer[end] == 0x0D, buffer[end + 1] == 0x0A else {
                throw RESPParseError(.missingTerminator, at: discarded + end)
            }
            position = end + 2
            bulk = nil
            return .value(try Self.bulkValue(type: pending.type, body: buffer[start..<end], offset: pending.offset))
        }
        let offset = discarded + position
        guard let line = try nextLine() else { return nil }
        guard let type = line.first else { throw RESPParseError(.malformedLine, at: offset) }
        let rest = line.dropFirst()
        switch type {
        case UInt8(ascii: "+"):
            return .value(.simpleString(String(decoding: rest, as: UTF8.self)))
        case UInt8(ascii: "-"):
            return .value(.error(String(decoding: rest, as: UTF8.self)))
        case UInt8(ascii: ":"):
            guard let number = Self.integer(rest) else { throw RESPParseError(.malformedLine, at: offset) }
            return .value(.integer(number))
        case UInt8(ascii: "$"), UInt8(ascii: "!"), UInt8(ascii: "="):
            guard let length = Self.integer(rest) else { throw RESPParseError(.malformedLine, at: offset) }
            if length == -1 && type == UInt8(ascii: "$") { return .value(.null) }
            guard length >= 0 else { throw RESPParseError(.negativeLength(length), at: offset) }
            guard length <= limits.maxBulkLength else { throw RESPParseError(.bulkTooLong(length), at: offset) }
            bulk = PendingBulk(type: type, length: Int(length), offset: offset)
            return try nextItem()
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "%"):
            guard let count = Self.integer(rest) else { throw RESPParseError(.malformedLine, at: offset) }
            if count == -1 && type == UInt8(ascii: "*") { return .value(.null) }
            guard count >= 0 else { throw RESPParseError(.negativeLength(count), at: offset) }
            let kind: AggregateKind
            switch type {
            case UInt8(ascii: "*"): kind = .array
            case UInt8(ascii: "~"): kind = .set
            case UInt8(ascii: ">"): kind = .push
            default: kind = .map
            }
            let elements = kind == .map ? count.multipliedReportingOverflow(by: 2) : (partialValue: count, overflow: false)
            guard !elements.overflow, elements.partialValue <= limits.maxAggregateLength else {
                throw RESPParseError(.aggregateTooLong(count), at: offset)
            }
            let frame = Frame(kind: kind, remaining: Int(elements.partialValue), elements: [])
            if frame.remaining == 0 { return .value(Self.close(frame)) }
            guard stack.count < limits.maxDepth else { throw RESPParseError(.tooDeep, at: offset) }
            stack.append(frame)
            // Room for what may plausibly follow: at most one element per three bytes already here.
            stack[stack.count - 1].elements.reserveCapacity(min(frame.remaining, 16 + (buffer.count - position) / 3))
            return .opened
        case UInt8(ascii: "_"):
            guard rest.isEmpty else { throw RESPParseError(.malformedLine, at: offset) }
            return .value(.null)
        case UInt8(ascii: "#"):
            guard rest.count == 1, let flag = rest.first, flag == UInt8(ascii: "t") || flag == UInt8(ascii: "f") else {
                throw RESPParseError(.malformedLine, at: offset)
            }
            return .value(.boolean(flag == UInt8(ascii: "t")))
        case UInt8(ascii: ","):
            guard let number = Self.double(rest) else { throw RESPParseError(.malformedLine, at: offset) }
            return .value(.double(number))
        case UInt8(ascii: "("):
            let digits = rest.first == UInt8(ascii: "-") ? rest.dropFirst() : rest
            guard !digits.isEmpty, digits.allSatisfy(Self.isDigit) else { throw RESPParseError(.malformedLine, at: offset) }
            return .value(.bigNumber(String(decoding: rest, as: UTF8.self)))
        default:
            throw RESPParseError(.unknownType(type), at: offset)
        }
    }

    /// The value of a bulk string, blob error or verbatim string whose body has arrived.
    private static func bulkValue(type: UInt8, body: ArraySlice<UInt8>, offset: Int) throws(RESPParseError) -> RESPValue {
        switch type {
        case UInt8(ascii: "$"):
            return .bulkString(Array(body))
        case UInt8(ascii: "!"):
            return .blobError(Array(body))
        default:
            // `=`: three bytes of format (printable ASCII, `txt` or `mkd`), a colon, the text.
            let start = body.startIndex
            guard body.count >= 4, body[start + 3] == UInt8(ascii: ":"),
                body[start..<start + 3].allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
            else { throw RESPParseError(.malformedLine, at: offset) }
            return .verbatimString(format: String(decoding: body[start..<start + 3], as: UTF8.self), text: Array(body[(start + 4)...]))
        }
    }

    /// The next line without its CRLF, consumed; nil until its `\n` has arrived.
    private mutating func nextLine() throws(RESPParseError) -> ArraySlice<UInt8>? {
        let searchStart = position + scanned
        guard let newline = buffer[searchStart...].firstIndex(of: 0x0A) else {
            scanned = buffer.count - position
            if scanned > limits.maxLineLength + 1 { throw RESPParseError(.lineTooLong, at: discarded + position) }
            return nil
        }
        // The length first, so that the error does not depend on how the bytes were split: a feed that ends
        // before the `\n` of a long line has already failed on its length.
        guard newline - position <= limits.maxLineLength + 1 else { throw RESPParseError(.lineTooLong, at: discarded + position) }
        let lineEnd = newline - 1
        guard lineEnd >= position, buffer[lineEnd] == 0x0D else {
            throw RESPParseError(.strayLineBreak, at: discarded + newline)
        }
        let line = buffer[position..<lineEnd]
        if let stray = line.firstIndex(of: 0x0D) { throw RESPParseError(.strayLineBreak, at: discarded + stray) }
        position = newline + 1
        scanned = 0
        return line
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// A signed 64-bit decimal: an optional `-`, then 1 to 19 digits, no overflow.
    private static func integer(_ text: ArraySlice<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        let digits = negative ? text.dropFirst() : text
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    /// A RESP3 double: `inf`, `-inf`, `nan`, or a decimal with an optional exponent.
    private static func double(_ text: ArraySlice<UInt8>) -> Double? {
        switch String(decoding: text, as: UTF8.self) {
        case "inf", "+inf": return .infinity
        case "-inf": return -.infinity
        case "nan", "-nan": return .nan
        case let decimal:
            let allowed: (UInt8) -> Bool = {
                isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
            }
            guard !text.isEmpty, text.count <= 64, text.allSatisfy(allowed), text.contains(where: isDigit) else { return nil }
            return Double(decimal)
        }
    }
}
