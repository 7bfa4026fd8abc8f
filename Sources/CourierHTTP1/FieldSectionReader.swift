package import CourierCore

/// Reads one field section of a response (RFC 9112 §5): the header section after a status line, or the trailer
/// section after the last chunk (§7.1.2). Both follow the same rules, so both are read here, with the same
/// limits and the same errors:
///
/// - every line ends in CRLF (`bareLineFeed`), and the section's bytes, CRLFs included, stay within `maxBytes`,
///   checked also inside an incomplete line (`headTooLarge` or `trailersTooLarge`);
/// - a field line is `name ":" OWS value OWS` with a `token` name (`invalidHeaderName`, `whitespaceBeforeColon`,
///   `missingColon`) and a value without control bytes other than HTAB (`invalidHeaderValue`); at most
///   `maxFieldCount` of them (`tooManyHeaders`);
/// - a line starting with SP or HTAB (obs-fold, §5.2) continues the field before it, the fold replaced with one
///   SP; with no field before it, it is `obsoleteLineFolding`;
/// - the empty line ends the section.
///
/// The reader works on the caller's buffer and returns indices into it; the caller turns them into offsets and
/// keeps what is not consumed. Fields are stored as bytes (no `String` per field), and an ``Observer`` hears of
/// each one as it is read: the head's notes the fields that decide framing.
package struct FieldSectionReader: Sendable {
    /// Which section is read: it decides the error for too many bytes.
    package enum Section: Sendable {
        case head, trailers
    }

    /// Told of each field as the reader stores it; a reason it returns fails the section.
    package protocol Observer {
        /// A field line was added to `fields`; a refusal is reported at the value's first byte.
        mutating func fieldAdded(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
            -> ResponseParseError.Reason?
        /// An obs-fold continued the last field of `fields` with `continuation` (trimmed, possibly empty); a
        /// refusal is reported at the fold line's first byte.
        mutating func lastFieldContinued(with continuation: UnsafeBufferPointer<UInt8>, in fields: HTTPHeaders)
            -> ResponseParseError.Reason?
    }

    /// An observer that wants nothing (the trailers decide nothing).
    package struct NoObserver: Observer {
        package init() {}
        package func fieldAdded(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> ResponseParseError.Reason? {
            nil
        }
        package func lastFieldContinued(with continuation: UnsafeBufferPointer<UInt8>, in fields: HTTPHeaders)
            -> ResponseParseError.Reason?
        { nil }
    }

    /// One line looked for by ``nextLine(_:from:searchingFrom:)``.
    package enum Line {
        /// The line is `p[start..<end]`; its CRLF is at `end`.
        case complete(end: Int)
        /// No LF yet: more bytes are needed.
        case incomplete
        /// The line is refused, for the byte at the index.
        case failed(ResponseParseError.Reason, at: Int)
    }

    /// Where ``read(_:from:searchingFrom:observer:)`` stopped.
    package enum Progress {
        /// The empty line ending the section was read; the next byte is at `next`.
        case complete(next: Int)
        /// The line starting at `lineStart` is incomplete: bytes before it are read, more are needed.
        case incomplete(lineStart: Int)
        /// The section is refused, for the byte at the index.
        case failed(ResponseParseError.Reason, at: Int)
    }

    package let section: Section
    /// The most bytes the section may hold, CRLFs included.
    package let maxBytes: Int
    /// The most field lines the section may hold (folds do not count).
    package let maxFieldCount: Int
    /// The fields read so far, in order.
    package private(set) var fields = HTTPHeaders()
    /// Bytes of the complete lines read so far, CRLFs included (a head's status line too).
    package private(set) var byteCount = 0

    package init(_ section: Section, maxBytes: Int, maxFieldCount: Int) {
        self.section = section
        self.maxBytes = maxBytes
        self.maxFieldCount = maxFieldCount
    }

    /// Reserves room for `fieldCount` fields holding `byteCount` bytes (a head's usual size).
    package mutating func reserveCapacity(fields fieldCount: Int, bytes byteCount: Int) {
        fields.reserveCapacity(fields: fieldCount, bytes: byteCount)
    }

    private var tooLarge: ResponseParseError.Reason {
        switch section {
        case .head: .headTooLarge(limit: maxBytes)
        case .trailers: .trailersTooLarge(limit: maxBytes)
        }
    }

    /// Finds the line starting at `p[start]` (its LF looked for from `searchFrom`: the bytes before are known to
    /// hold none), counts it against ``maxBytes`` and checks that it ends in CRLF. A head's status line is read
    /// with this too, so that it counts against the head's budget.
    @inline(__always)
    package mutating func nextLine(_ p: UnsafeBufferPointer<UInt8>, from start: Int, searchingFrom searchFrom: Int) -> Line {
        // The first byte beyond the limit, whether or not the line is complete.
        let overLimit = start + maxBytes - byteCount
        guard let lfIndex = indexOfLF(p, from: searchFrom) else {
            if byteCount + (p.count - start) > maxBytes { return .failed(tooLarge, at: overLimit) }
            return .incomplete
        }
        byteCount += lfIndex + 1 - start
        if byteCount > maxBytes { return .failed(tooLarge, at: overLimit) }
        guard lfIndex > start, p[lfIndex - 1] == cr else { return .failed(.bareLineFeed, at: lfIndex) }
        return .complete(end: lfIndex - 1)
    }

    /// Reads the lines of `p` from `start` (an LF looked for from `searchFrom`) up to and including the empty
    /// line that ends the section.
    package mutating func read(
        _ p: UnsafeBufferPointer<UInt8>,
        from start: Int,
        searchingFrom searchFrom: Int,
        observer: inout some Observer
    ) -> Progress {
        var lineStart = start
        var searchFrom = searchFrom
        while true {
            switch nextLine(p, from: lineStart, searchingFrom: searchFrom) {
            case .incomplete:
                return .incomplete(lineStart: lineStart)
            case .failed(let reason, let at):
                return .failed(reason, at: at)
            case .complete(let end):
                if end == lineStart { return .complete(next: end + 2) }
                if let (reason, at) = readLine(p, lineStart, end, observer: &observer) { return .failed(reason, at: at) }
                lineStart = end + 2
                searchFrom = lineStart
            }
        }
    }

    /// Reads the non-empty line `p[start..<end]`: a field line, or an obs-fold continuing the field before it.
    @inline(__always)
    private mutating func readLine(
        _ p: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ end: Int,
        observer: inout some Observer
    ) -> (ResponseParseError.Reason, Int)? {
        if isFold(p[start]) {
            // RFC 9112 §5.2 has the recipient replace the fold with one SP; with no field before it (right after
            // the status line or at the start of the trailers) there is nothing to continue.
            guard !fields.isEmpty else { return (.obsoleteLineFolding, start) }
            let value = trimmed(p, start, end)
            if let bad = firstInvalidFieldByte(p, value.start, value.end) { return (.invalidHeaderValue, bad) }
            let continuation = slice(p, value.start, value.end)
            fields.continueLastValue(with: continuation)
            return observer.lastFieldContinued(with: continuation, in: fields).map { ($0, start) }
        }
        if fields.count >= maxFieldCount { return (.tooManyHeaders(limit: maxFieldCount), start) }
        var i = start
        while i < end {
            let b = p[i]
            if b == colon { break }
            if HTTPToken.isTokenCharacter(b) {
                i += 1
                continue
            }
            if b == sp || b == tab { return (.whitespaceBeforeColon, i) }
            return (.invalidHeaderName, i)
        }
        if i == end { return (.missingColon, start) }
        if i == start { return (.invalidHeaderName, start) }
        let value = trimmed(p, i + 1, end)
        if let bad = firstInvalidFieldByte(p, value.start, value.end) { return (.invalidHeaderValue, bad) }
        let name = slice(p, start, i)
        let valueBytes = slice(p, value.start, value.end)
        fields.add(nameBytes: name, valueBytes: valueBytes)
        return observer.fieldAdded(name: name, value: valueBytes).map { ($0, value.start) }
    }

    /// The bounds of `p[start..<end]` without the spaces and tabs around it.
    @inline(__always)
    private func trimmed(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (start: Int, end: Int) {
        var valueStart = start
        while valueStart < end, p[valueStart] == sp || p[valueStart] == tab { valueStart += 1 }
        var valueEnd = end
        while valueEnd > valueStart, p[valueEnd - 1] == sp || p[valueEnd - 1] == tab { valueEnd -= 1 }
        return (valueStart, valueEnd)
    }
}

/// A field line starting with SP or HTAB continues the previous field (obs-fold, RFC 9112 §5.2).
@inline(__always)
private func isFold(_ b: UInt8) -> Bool { b == sp || b == tab }
