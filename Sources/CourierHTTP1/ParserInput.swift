/// The bytes a message parser was fed and has not consumed yet, with what is known about them: how many at the
/// front hold no LF (an incomplete line already scanned), and how many bytes of the current message were consumed
/// before them (error offsets count from the message's first byte). The response and request parsers keep their
/// input in one of these.
struct ParserInput: Sendable {
    /// Fed, not consumed.
    var bytes: ArraySlice<UInt8> = []
    /// Bytes at the front of ``bytes`` already known to hold no LF.
    var scanned = 0
    /// Bytes of the current message consumed so far.
    var messageOffset = 0

    /// Adds bytes; cheap when nothing is buffered (the slice is kept as is).
    mutating func append(_ more: ArraySlice<UInt8>) {
        if bytes.isEmpty {
            bytes = more
        } else {
            bytes.append(contentsOf: more)
        }
    }

    /// Removes and returns the first `count` bytes.
    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let slice = bytes.prefix(count)
        consume(count)
        return slice
    }

    mutating func consume(_ count: Int) {
        messageOffset += count
        scanned = 0
        if count == bytes.count {
            bytes = []
        } else {
            bytes = bytes.dropFirst(count)
        }
    }

    /// Applies where a field section's reading stopped, `count` being the number of bytes that were read: keeps
    /// the incomplete line when more bytes are needed (`false`), consumes a complete section (`true`), or gives a
    /// failure with its offset in the message.
    mutating func settle(_ progress: FieldSectionReader.Progress, count: Int) -> Result<Bool, SectionFailure> {
        switch progress {
        case .incomplete(let lineStart):
            // Bytes from `lineStart` on hold no LF: the next scan starts after them.
            if lineStart > 0 { consume(lineStart) }
            scanned = count - lineStart
            return .success(false)
        case .failed(let reason, let at):
            return .failure(SectionFailure(reason: reason, offset: messageOffset + at))
        case .complete(let next):
            consume(next)
            return .success(true)
        }
    }

    /// A field section refused, for the byte at `offset` in the message.
    struct SectionFailure: Error {
        var reason: ResponseParseError.Reason
        var offset: Int
    }
}
