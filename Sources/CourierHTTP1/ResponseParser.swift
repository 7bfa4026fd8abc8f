import CourierCore

/// An incremental HTTP/1.1 response parser (RFC 9112), bytes in, ``ResponseEvent``s out, no I/O.
///
/// Feed bytes as they arrive, in any split, then drain events:
///
/// ```swift
/// var parser = ResponseParser(requestMethod: .get)
/// parser.feed(bytesFromSocket)
/// while let event = try parser.next() { ... }
/// // when the peer closes the connection:
/// parser.eof()
/// while let event = try parser.next() { ... }
/// ```
///
/// Body bytes are reported as slices of the fed buffers (no per-byte copy). Only an incomplete line (a partial
/// status, header, chunk-size or trailer line) is kept between feeds, and it is bounded by ``Limits``.
/// After ``ResponseEvent/end(keepAlive:)`` with `keepAlive == true`, call ``expectResponse(to:)`` before the
/// next request's response. Any framing error is thrown as ``ResponseParseError``; after that the parser
/// throws the same error forever and the connection must be closed. See docs/http1.md for the rules.
public struct ResponseParser: Sendable {
    /// Bounds on what a server can make the parser buffer or process. Exceeding one is a
    /// ``ResponseParseError``, never a silent truncation.
    public struct Limits: Hashable, Sendable {
        /// Status line plus header section, CRLFs included, per response head (1xx heads each get their own
        /// budget). Default 64 KiB.
        public var maxHeadBytes: Int
        /// Header field lines per head, and trailer field lines per message. Default 100.
        public var maxHeaderCount: Int
        /// Bytes of extensions on one chunk-size line (everything after the size). Default 4 KiB.
        public var maxChunkExtensionBytes: Int
        /// Trailer section, CRLFs included. Default 16 KiB.
        public var maxTrailerBytes: Int
        /// 1xx interim responses (100, 102, 103, ...) tolerated before the final one. Default 16.
        public var maxInterimResponses: Int

        public init(
            maxHeadBytes: Int = 64 * 1024,
            maxHeaderCount: Int = 100,
            maxChunkExtensionBytes: Int = 4 * 1024,
            maxTrailerBytes: Int = 16 * 1024,
            maxInterimResponses: Int = 16
        ) {
            self.maxHeadBytes = maxHeadBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxChunkExtensionBytes = maxChunkExtensionBytes
            self.maxTrailerBytes = maxTrailerBytes
            self.maxInterimResponses = maxInterimResponses
        }
    }

    private enum State: Sendable {
        /// Reading the status line and header section (of interim or final heads).
        case head
        /// `Content-Length` body; `remaining` bytes still to come.
        case fixedBody(remaining: Int)
        /// Expecting a chunk-size line.
        case chunkSize
        /// Inside chunk data.
        case chunkData(remaining: Int)
        /// Expecting the CRLF after chunk data.
        case chunkDataEnd
        /// Reading the trailer section after the last chunk.
        case trailers
        /// Body delimited by the connection closing.
        case closeDelimited
        /// The message is complete; the end event is still to be reported.
        case ending
        /// Between messages (or after the last one).
        case idle
        /// A protocol error was thrown (kept in `failure`); it is thrown again on every call.
        case failed
    }

    /// What the fields read so far say about the body's framing and the connection.
    fileprivate struct Framing: Sendable {
        var contentLength: Int?
        /// `Transfer-Encoding` field lines seen, and whether all of them (joined) say exactly `chunked`.
        var transferEncodingCount = 0
        var transferEncodingIsChunked = false
        /// The raw `Transfer-Encoding` values, joined with commas, for the error message.
        var transferEncodings = ""
        /// A `Connection` field holds the `close` token.
        var connectionClose = false
    }

    /// The fields that decide framing.
    fileprivate enum FramingField: Sendable {
        case contentLength, transferEncoding, connection
    }

    /// The head being parsed.
    private struct HeadBuilder: Sendable {
        var version: HTTPVersion?
        var status = 0
        var reason = ""
        var headers = HTTPHeaders()
        var bytes = 0
        var framing = Framing()
        /// When the last field line decides framing: which field, and the framing as it was before it, so that
        /// an obs-fold continuing that field reads the whole unfolded value again.
        var lastFramingField: (field: FramingField, before: Framing)?
    }

    /// The limits in force.
    public let limits: Limits

    private var state: State = .head
    /// The request was `HEAD` (no body in the response) / `CONNECT` (a 2xx starts a tunnel).
    private var requestIsHead: Bool
    private var requestIsConnect: Bool
    private var failure: ResponseParseError?
    private var buffer: ArraySlice<UInt8> = []
    /// Bytes at the front of `buffer` already known to hold no LF (the incomplete line so far).
    private var scanned = 0
    private var sawEOF = false
    /// Bytes of the current response consumed so far (offsets in errors are relative to its first byte).
    private var messageOffset = 0
    private var builder = HeadBuilder()
    private var interimResponses = 0
    private var keepAlive = true
    private var trailerFields = HTTPHeaders()
    private var trailerBytes = 0

    /// A parser for the response to a request made with `requestMethod` (a `HEAD` response has no body).
    public init(requestMethod: HTTPMethod = .get, limits: Limits = Limits()) {
        self.requestIsHead = requestMethod.rawValue == "HEAD"
        self.requestIsConnect = requestMethod.rawValue == "CONNECT"
        self.limits = limits
    }

    /// True between messages: the previous response ended (or none started) and no event is pending.
    public var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Bytes fed but not yet consumed. Non-zero while idle means the server sent bytes nobody asked for.
    public var bufferedByteCount: Int { buffer.count }

    /// Whether any byte of the current response has been consumed or is buffered.
    public var hasReceivedResponseBytes: Bool { messageOffset > 0 || !buffer.isEmpty }

    /// Prepares for the response to the next request on the same connection, made with `method`.
    /// Only legal once the previous response ended with `keepAlive == true`.
    public mutating func expectResponse(to method: HTTPMethod) {
        guard case .idle = state, keepAlive, !sawEOF else {
            preconditionFailure("expectResponse(to:) needs an idle, reusable parser; state: \(state)")
        }
        requestIsHead = method.rawValue == "HEAD"
        requestIsConnect = method.rawValue == "CONNECT"
        state = .head
    }

    /// Adds bytes received from the server. Cheap: when nothing is buffered the slice is kept as is.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) {
        precondition(!sawEOF, "feed(_:) after eof()")
        if buffer.isEmpty {
            buffer = bytes
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Adds bytes received from the server.
    public mutating func feed(_ bytes: [UInt8]) { feed(bytes[...]) }

    /// In a `Content-Length` body with nothing buffered: the body bytes still to come, which the caller may then
    /// receive straight into its own buffer (see ``bodyReceivedDirectly(_:)``) instead of feeding them through
    /// the parser. Nil in any other state, or once the server closed the connection.
    public var directBodyBytesRemaining: Int? {
        guard case .fixedBody(let remaining) = state, remaining > 0, buffer.isEmpty, !sawEOF else { return nil }
        return remaining
    }

    /// Records `count` body bytes the caller received itself while ``directBodyBytesRemaining`` allowed it (at
    /// most that many). When the last one arrives, the next ``next()`` returns `.end`.
    public mutating func bodyReceivedDirectly(_ count: Int) {
        guard let remaining = directBodyBytesRemaining, count > 0, count <= remaining else {
            preconditionFailure("bodyReceivedDirectly(\(count)) outside a Content-Length body awaiting that many bytes")
        }
        messageOffset += count
        state = .fixedBody(remaining: remaining - count)
    }

    /// Records that the server closed the connection (read returned 0). A close-delimited body then ends;
    /// anything else unfinished becomes an error on the next call to ``next()``.
    public mutating func eof() { sawEOF = true }

    /// Feeds `bytes` and returns every event they complete (a convenience for tests and simple callers).
    public mutating func parse(_ bytes: [UInt8]) throws(ResponseParseError) -> [ResponseEvent] {
        feed(bytes)
        var events: [ResponseEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }

    /// The next event, or nil when more bytes (or ``eof()``) are needed, or the parser is idle.
    public mutating func next() throws(ResponseParseError) -> ResponseEvent? {
        while true {
            switch state {
            case .failed:
                throw failure ?? ResponseParseError(.invalidStatusLine)
            case .idle:
                return nil
            case .ending:
                state = .idle
                messageOffset = 0
                builder = HeadBuilder()
                interimResponses = 0
                trailerFields = HTTPHeaders()
                trailerBytes = 0
                return .end(keepAlive: keepAlive)
            case .head:
                if buffer.isEmpty {
                    if sawEOF {
                        throw fail(messageOffset == 0 ? .closedBeforeResponse : .truncatedHead, at: messageOffset)
                    }
                    return nil
                }
                if let head = try parseHead() { return .head(head) }
                if sawEOF { throw fail(.truncatedHead, at: messageOffset + buffer.count) }
                return nil
            case .fixedBody(let remaining):
                if remaining == 0 {
                    state = .ending
                    continue
                }
                if buffer.isEmpty {
                    if sawEOF { throw fail(.truncatedBody(missing: remaining), at: messageOffset) }
                    return nil
                }
                let slice = take(min(remaining, buffer.count))
                state = .fixedBody(remaining: remaining - slice.count)
                return .body(slice)
            case .closeDelimited:
                if buffer.isEmpty {
                    if sawEOF {
                        state = .ending
                        continue
                    }
                    return nil
                }
                return .body(take(buffer.count))
            case .chunkSize:
                guard let size = try parseChunkSizeLine() else {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: messageOffset + buffer.count) }
                    return nil
                }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                if buffer.isEmpty {
                    if sawEOF { throw fail(.truncatedBody(missing: remaining), at: messageOffset) }
                    return nil
                }
                let slice = take(min(remaining, buffer.count))
                let left = remaining - slice.count
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(slice)
            case .chunkDataEnd:
                let start = buffer.startIndex
                if buffer.count >= 1, buffer[start] != cr {
                    throw fail(.missingChunkTerminator, at: messageOffset)
                }
                if buffer.count >= 2, buffer[start + 1] != lf {
                    throw fail(.missingChunkTerminator, at: messageOffset + 1)
                }
                if buffer.count < 2 {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: messageOffset + buffer.count) }
                    return nil
                }
                _ = take(2)
                state = .chunkSize
            case .trailers:
                guard try parseTrailers() else {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: messageOffset + buffer.count) }
                    return nil
                }
                state = .ending
                if !trailerFields.isEmpty { return .trailers(trailerFields) }
            }
        }
    }

    // MARK: - Buffer handling

    /// Removes and returns the first `count` buffered bytes.
    private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let slice = buffer.prefix(count)
        consume(count)
        return slice
    }

    private mutating func consume(_ count: Int) {
        messageOffset += count
        scanned = 0
        if count == buffer.count {
            buffer = []
        } else {
            buffer = buffer.dropFirst(count)
        }
    }

    private mutating func fail(_ reason: ResponseParseError.Reason, at offset: Int?) -> ResponseParseError {
        let error = ResponseParseError(reason, offset: offset)
        state = .failed
        failure = error
        return error
    }

    // MARK: - Head

    /// Applies the outcome of a line scan: keeps the unscanned tail when more bytes are needed, throws on a
    /// failure, and says whether the section (head or trailers) is complete.
    private mutating func settle(_ step: LineStep, consumed: Int) throws(ResponseParseError) -> Bool {
        switch step {
        case .needMore:
            if consumed > 0 {
                let keep = scanned
                consume(consumed)
                scanned = keep
            }
            return false
        case .failed(let reason, let offset):
            throw fail(reason, at: offset)
        case .done:
            consume(consumed)
            return true
        }
    }

    private enum LineStep {
        case needMore
        case done
        case failed(ResponseParseError.Reason, offset: Int)
    }

    /// Parses complete lines of the head; returns the final head once its empty line is seen.
    private mutating func parseHead() throws(ResponseParseError) -> HTTPResponseHead? {
        let bytes = buffer
        var consumed = 0
        let step: LineStep = bytes.withUnsafeBufferPointer { p in
            var lineStart = 0
            var searchFrom = scanned
            while true {
                // Offset of the first byte beyond the limit, whether or not the line is complete.
                let overLimit = messageOffset + lineStart + limits.maxHeadBytes - builder.bytes
                guard let lfIndex = indexOfLF(p, from: searchFrom) else {
                    consumed = lineStart
                    scanned = p.count - lineStart
                    if builder.bytes + (p.count - lineStart) > limits.maxHeadBytes {
                        return .failed(.headTooLarge(limit: limits.maxHeadBytes), offset: overLimit)
                    }
                    return .needMore
                }
                builder.bytes += lfIndex + 1 - lineStart
                if builder.bytes > limits.maxHeadBytes {
                    return .failed(.headTooLarge(limit: limits.maxHeadBytes), offset: overLimit)
                }
                guard lfIndex > lineStart, p[lfIndex - 1] == cr else {
                    return .failed(.bareLineFeed, offset: messageOffset + lfIndex)
                }
                let end = lfIndex - 1
                if builder.version == nil {
                    if let (reason, at) = parseStatusLine(p, lineStart, end) {
                        return .failed(reason, offset: messageOffset + at)
                    }
                } else if lineStart == end {
                    // The empty line: the head is complete.
                    consumed = lfIndex + 1
                    if builder.status >= 200 { return .done }
                    interimResponses += 1
                    if interimResponses > limits.maxInterimResponses {
                        return .failed(
                            .tooManyInterimResponses(limit: limits.maxInterimResponses),
                            offset: messageOffset + lineStart
                        )
                    }
                    builder = HeadBuilder()
                } else if isFold(p[lineStart]) {
                    if let (reason, at) = unfoldHeader(p, lineStart, end) {
                        return .failed(reason, offset: messageOffset + at)
                    }
                } else {
                    if builder.headers.count >= limits.maxHeaderCount {
                        return .failed(.tooManyHeaders(limit: limits.maxHeaderCount), offset: messageOffset + lineStart)
                    }
                    switch parseFieldLine(p, lineStart, end) {
                    case .failure(let reason, let at):
                        return .failed(reason, offset: messageOffset + at)
                    case .field(let nameEnd, let valueStart, let valueEnd):
                        if let (reason, at) = recordHeader(p, lineStart, nameEnd, valueStart, valueEnd) {
                            return .failed(reason, offset: messageOffset + at)
                        }
                    }
                }
                lineStart = lfIndex + 1
                searchFrom = lineStart
                scanned = 0
            }
        }
        guard try settle(step, consumed: consumed) else { return nil }
        return try finishHead()
    }

    /// Parses `HTTP/1.x SP 3DIGIT [SP reason]`; returns the error and its index, if any.
    private mutating func parseStatusLine(
        _ p: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ end: Int
    ) -> (ResponseParseError.Reason, Int)? {
        guard end - start >= 12 else { return (.invalidStatusLine, start) }
        guard p[start] == UInt8(ascii: "H"), p[start + 1] == UInt8(ascii: "T"), p[start + 2] == UInt8(ascii: "T"),
            p[start + 3] == UInt8(ascii: "P"), p[start + 4] == UInt8(ascii: "/"), isDigit(p[start + 5]),
            p[start + 6] == UInt8(ascii: "."), isDigit(p[start + 7]), p[start + 8] == sp
        else { return (.invalidStatusLine, start) }
        let major = Int(p[start + 5] &- zero)
        let minor = Int(p[start + 7] &- zero)
        guard major == 1 else { return (.unsupportedVersion, start + 5) }
        guard isDigit(p[start + 9]), isDigit(p[start + 10]), isDigit(p[start + 11]) else {
            return (.invalidStatusCode, start + 9)
        }
        let status = Int(p[start + 9] &- zero) * 100 + Int(p[start + 10] &- zero) * 10 + Int(p[start + 11] &- zero)
        guard status >= 100, status <= 599 else { return (.invalidStatusCode, start + 9) }
        if status == 101 { return (.switchingProtocolsNotSupported, start + 9) }
        var reasonStart = start + 12
        if reasonStart < end {
            guard p[reasonStart] == sp else { return (.invalidStatusLine, reasonStart) }
            reasonStart += 1
            if let bad = firstInvalidFieldByte(p, reasonStart, end) { return (.invalidStatusLine, bad) }
        }
        builder.version = HTTPVersion(major: major, minor: minor)
        builder.status = status
        builder.reason = reasonStart < end ? string(p, reasonStart, end) : ""
        builder.headers.reserveCapacity(fields: 16, bytes: 512)
        return nil
    }

    private enum FieldLine {
        case field(nameEnd: Int, valueStart: Int, valueEnd: Int)
        case failure(ResponseParseError.Reason, Int)
    }

    /// Splits and validates a field line `name ":" OWS value OWS` held in `p[start..<end]` (which does not start
    /// with whitespace: see ``foldedValue(_:_:_:continuing:)``).
    private func parseFieldLine(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> FieldLine {
        var i = start
        while i < end {
            let b = p[i]
            if b == colon { break }
            if isTokenByte(b) {
                i += 1
                continue
            }
            if b == sp || b == tab { return .failure(.whitespaceBeforeColon, i) }
            return .failure(.invalidHeaderName, i)
        }
        if i == end { return .failure(.missingColon, start) }
        if i == start { return .failure(.invalidHeaderName, start) }
        let nameEnd = i
        switch fieldValue(p, nameEnd + 1, end) {
        case .success(let (valueStart, valueEnd)): return .field(nameEnd: nameEnd, valueStart: valueStart, valueEnd: valueEnd)
        case .failure(let failure): return .failure(failure.reason, failure.at)
        }
    }

    /// Why a field line was refused, and the index of the byte that says so.
    private struct FieldLineError: Error {
        var reason: ResponseParseError.Reason
        var at: Int
    }

    /// The bounds of `p[start..<end]` without the spaces and tabs around it, or the index of its first byte
    /// that may not appear in a field value.
    private func fieldValue(
        _ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> Result<(start: Int, end: Int), FieldLineError> {
        var valueStart = start
        while valueStart < end, p[valueStart] == sp || p[valueStart] == tab { valueStart += 1 }
        var valueEnd = end
        while valueEnd > valueStart, p[valueEnd - 1] == sp || p[valueEnd - 1] == tab { valueEnd -= 1 }
        if let bad = firstInvalidFieldByte(p, valueStart, valueEnd) { return .failure(FieldLineError(reason: .invalidHeaderValue, at: bad)) }
        return .success((valueStart, valueEnd))
    }

    /// The continuation of the previous field in the obs-fold line `p[start..<end]` (it starts with SP or HTAB),
    /// trimmed and checked; RFC 9112 §5.2 has the recipient replace the fold with one SP. A fold with no field
    /// before it (right after the status line or the start of the trailers) is `obsoleteLineFolding`.
    private func foldedValue(
        _ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, continuing fields: HTTPHeaders
    ) -> Result<UnsafeBufferPointer<UInt8>, FieldLineError> {
        guard !fields.isEmpty else { return .failure(FieldLineError(reason: .obsoleteLineFolding, at: start)) }
        return fieldValue(p, start, end).map { slice(p, $0.start, $0.end) }
    }

    /// Appends a header field to the head and notes the ones that decide framing.
    private mutating func recordHeader(
        _ p: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ nameEnd: Int,
        _ valueStart: Int,
        _ valueEnd: Int
    ) -> (ResponseParseError.Reason, Int)? {
        let field: FramingField?
        switch nameEnd - start {
        case 14 where equalsLowercase(p, start, "content-length"): field = .contentLength
        case 17 where equalsLowercase(p, start, "transfer-encoding"): field = .transferEncoding
        case 10 where equalsLowercase(p, start, "connection"): field = .connection
        default: field = nil
        }
        let value = slice(p, valueStart, valueEnd)
        builder.lastFramingField = field.map { ($0, builder.framing) }
        if let field, let reason = builder.framing.note(field, value) { return (reason, valueStart) }
        builder.headers.add(nameBytes: slice(p, start, nameEnd), valueBytes: value)
        return nil
    }

    /// Unfolds the obs-fold line `p[start..<end]` into the previous header field and, when that field decides
    /// framing, reads its whole value again.
    private mutating func unfoldHeader(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (ResponseParseError.Reason, Int)? {
        let continuation: UnsafeBufferPointer<UInt8>
        switch foldedValue(p, start, end, continuing: builder.headers) {
        case .success(let bytes): continuation = bytes
        case .failure(let failure): return (failure.reason, failure.at)
        }
        builder.headers.continueLastValue(with: continuation)
        guard let (field, before) = builder.lastFramingField, !continuation.isEmpty else { return nil }
        var framing = before
        let reason = builder.headers.withLastValue { framing.note(field, $0) } ?? nil
        builder.framing = framing
        return reason.map { ($0, start) }
    }

    /// Decides the body's framing (RFC 9112 §6.3) once the final head is complete.
    private mutating func finishHead() throws(ResponseParseError) -> HTTPResponseHead {
        let version = builder.version ?? .http1_1
        let head = HTTPResponseHead(
            version: version,
            status: builder.status,
            reason: builder.reason,
            headers: builder.headers
        )
        let headEnd = messageOffset
        let framing = builder.framing
        keepAlive = version.minor >= 1 && !framing.connectionClose
        var chunked = false
        if framing.transferEncodingCount > 0 {
            if version.minor == 0 { throw fail(.transferEncodingInHTTP10, at: headEnd) }
            if framing.contentLength != nil { throw fail(.contentLengthWithTransferEncoding, at: headEnd) }
            guard framing.transferEncodingIsChunked else {
                if hasBody(head) { throw fail(.unsupportedTransferEncoding(framing.transferEncodings), at: headEnd) }
                state = .ending
                return head
            }
            chunked = true
        }
        if !hasBody(head) {
            if requestIsConnect { keepAlive = false }
            state = .ending
        } else if chunked {
            state = .chunkSize
        } else if let length = framing.contentLength {
            state = .fixedBody(remaining: length)
        } else {
            keepAlive = false
            state = .closeDelimited
        }
        return head
    }

    private func hasBody(_ head: HTTPResponseHead) -> Bool {
        if requestIsHead || head.status == 204 || head.status == 304 { return false }
        if requestIsConnect, head.status / 100 == 2 { return false }
        return true
    }

    // MARK: - Chunked body

    /// Parses one chunk-size line; nil when it is not complete yet.
    private mutating func parseChunkSizeLine() throws(ResponseParseError) -> Int? {
        let bytes = buffer
        let extLimit = limits.maxChunkExtensionBytes
        var lineEnd = 0
        var result: Result<Int, ChunkLineError>?
        bytes.withUnsafeBufferPointer { p in
            // A chunk-size line (without CRLF) may hold up to 64 bytes of size and BWS plus the extensions.
            let maxLine = extLimit + 64
            guard let lfIndex = indexOfLF(p, from: scanned) else {
                scanned = p.count
                if p.count > maxLine + 1 {
                    result = .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: maxLine))
                }
                return
            }
            lineEnd = lfIndex + 1
            if lfIndex > maxLine + 1 {
                result = .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: maxLine))
                return
            }
            guard lfIndex > 0, p[lfIndex - 1] == cr else {
                result = .failure(ChunkLineError(reason: .bareLineFeed, at: lfIndex))
                return
            }
            result = Self.chunkSize(p, end: lfIndex - 1, extLimit: extLimit)
        }
        switch result {
        case nil:
            return nil
        case .failure(let error):
            throw fail(error.reason, at: messageOffset + error.at)
        case .success(let size):
            consume(lineEnd)
            return size
        }
    }

    private struct ChunkLineError: Error {
        var reason: ResponseParseError.Reason
        var at: Int
    }

    /// `chunk-size [ chunk-ext ]` in `p[0..<end]`.
    private static func chunkSize(_ p: UnsafeBufferPointer<UInt8>, end: Int, extLimit: Int) -> Result<Int, ChunkLineError> {
        var size = 0
        var i = 0
        while i < end, let digit = hexValue(p[i]) {
            let (shifted, o1) = size.multipliedReportingOverflow(by: 16)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            if o1 || o2 { return .failure(ChunkLineError(reason: .chunkSizeOverflow, at: i)) }
            size = sum
            i += 1
        }
        if i == 0 { return .failure(ChunkLineError(reason: .invalidChunkSize, at: 0)) }
        guard i < end else { return .success(size) }
        let b = p[i]
        guard b == semicolon || b == sp || b == tab else {
            return .failure(ChunkLineError(reason: .invalidChunkSize, at: i))
        }
        if end - i > extLimit {
            return .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: i + extLimit))
        }
        var j = i
        while j < end, p[j] == sp || p[j] == tab { j += 1 }
        guard j < end, p[j] == semicolon else { return .failure(ChunkLineError(reason: .invalidChunkExtension, at: j)) }
        while j < end {
            let c = p[j]
            if (c < 0x20 && c != tab) || c == 0x7F { return .failure(ChunkLineError(reason: .invalidChunkExtension, at: j)) }
            j += 1
        }
        return .success(size)
    }

    /// Parses trailer lines; true once the empty line ending the trailer section was consumed.
    private mutating func parseTrailers() throws(ResponseParseError) -> Bool {
        let bytes = buffer
        var consumed = 0
        let step: LineStep = bytes.withUnsafeBufferPointer { p in
            var lineStart = 0
            var searchFrom = scanned
            while true {
                let overLimit = messageOffset + lineStart + limits.maxTrailerBytes - trailerBytes
                guard let lfIndex = indexOfLF(p, from: searchFrom) else {
                    consumed = lineStart
                    scanned = p.count - lineStart
                    if trailerBytes + (p.count - lineStart) > limits.maxTrailerBytes {
                        return .failed(.trailersTooLarge(limit: limits.maxTrailerBytes), offset: overLimit)
                    }
                    return .needMore
                }
                trailerBytes += lfIndex + 1 - lineStart
                if trailerBytes > limits.maxTrailerBytes {
                    return .failed(.trailersTooLarge(limit: limits.maxTrailerBytes), offset: overLimit)
                }
                guard lfIndex > lineStart, p[lfIndex - 1] == cr else {
                    return .failed(.bareLineFeed, offset: messageOffset + lfIndex)
                }
                let end = lfIndex - 1
                if lineStart == end {
                    consumed = lfIndex + 1
                    return .done
                }
                if isFold(p[lineStart]) {
                    switch foldedValue(p, lineStart, end, continuing: trailerFields) {
                    case .success(let continuation): trailerFields.continueLastValue(with: continuation)
                    case .failure(let failure): return .failed(failure.reason, offset: messageOffset + failure.at)
                    }
                } else {
                    if trailerFields.count >= limits.maxHeaderCount {
                        return .failed(.tooManyHeaders(limit: limits.maxHeaderCount), offset: messageOffset + lineStart)
                    }
                    switch parseFieldLine(p, lineStart, end) {
                    case .failure(let reason, let at):
                        return .failed(reason, offset: messageOffset + at)
                    case .field(let nameEnd, let valueStart, let valueEnd):
                        trailerFields.add(nameBytes: slice(p, lineStart, nameEnd), valueBytes: slice(p, valueStart, valueEnd))
                    }
                }
                lineStart = lfIndex + 1
                searchFrom = lineStart
                scanned = 0
            }
        }
        return try settle(step, consumed: consumed)
    }
}

// MARK: - Framing fields

extension ResponseParser.Framing {
    /// Notes what the value of a framing field says; returns the reason when it is invalid or conflicts with an
    /// earlier field.
    fileprivate mutating func note(_ field: ResponseParser.FramingField, _ value: UnsafeBufferPointer<UInt8>) -> ResponseParseError.Reason? {
        switch field {
        case .contentLength:
            guard let length = parseContentLength(value, 0, value.count) else { return .invalidContentLength }
            if length < 0 { return .conflictingContentLength }
            if let previous = contentLength, previous != length { return .conflictingContentLength }
            contentLength = length
        case .transferEncoding:
            transferEncodingCount += 1
            transferEncodingIsChunked = transferEncodingCount == 1 && value.count == 7 && equalsLowercase(value, 0, "chunked")
            let text = string(value, 0, value.count)
            transferEncodings += transferEncodingCount == 1 ? text : "," + text
        case .connection:
            if listContainsClose(value, 0, value.count) { connectionClose = true }
        }
        return nil
    }
}

// MARK: - Byte helpers

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let sp = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")
private let semicolon = UInt8(ascii: ";")
private let zero = UInt8(ascii: "0")

/// A field line starting with SP or HTAB continues the previous field (obs-fold, RFC 9112 §5.2).
@inline(__always)
private func isFold(_ b: UInt8) -> Bool { b == sp || b == tab }

@inline(__always)
private func isDigit(_ b: UInt8) -> Bool { b &- zero < 10 }

@inline(__always)
private func hexValue(_ b: UInt8) -> Int? {
    if b &- zero < 10 { return Int(b &- zero) }
    let lower = b | 0x20
    if lower &- UInt8(ascii: "a") < 6 { return Int(lower &- UInt8(ascii: "a")) + 10 }
    return nil
}

/// `tchar` (RFC 9110 §5.6.2) as two 64-bit masks.
@inline(__always)
private func isTokenByte(_ b: UInt8) -> Bool {
    if b < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> UInt64(b) & 1 == 1 }
    if b < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> UInt64(b - 64) & 1 == 1 }
    return false
}

/// Bytes not allowed in a field value or reason phrase: controls other than HTAB, and DEL.
@inline(__always)
private func isInvalidFieldByte(_ b: UInt8) -> Bool { (b < 0x20 && b != tab) || b == 0x7F }

/// The index of the first byte in `p[start..<end]` that ``isInvalidFieldByte(_:)``, checking eight bytes at a
/// time and falling back to bytes only for a word holding a control byte or DEL (HTAB is allowed).
@inline(__always)
private func firstInvalidFieldByte(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
    guard let base = p.baseAddress else { return nil }
    let raw = UnsafeRawPointer(base)
    var i = start
    while i + 8 <= end {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        // A byte below 0x20 (only ASCII bytes can set the bit), or a byte equal to 0x7F.
        let control = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
        let del = word ^ 0x7F7F_7F7F_7F7F_7F7F
        let delFound = (del &- 0x0101_0101_0101_0101) & ~del & 0x8080_8080_8080_8080
        if control | delFound != 0 {
            for k in i..<(i + 8) where isInvalidFieldByte(base[k]) { return k }
        }
        i += 8
    }
    while i < end {
        if isInvalidFieldByte(base[i]) { return i }
        i += 1
    }
    return nil
}

/// The index of the first LF at or after `start`, scanning eight bytes at a time.
@inline(__always)
private func indexOfLF(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    guard let base = p.baseAddress else { return nil }
    let count = p.count
    var i = start
    let raw = UnsafeRawPointer(base)
    while i + 8 <= count {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
        let found = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
        if found != 0 { return i + found.trailingZeroBitCount >> 3 }
        i += 8
    }
    while i < count {
        if base[i] == lf { return i }
        i += 1
    }
    return nil
}

@inline(__always)
private func slice(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: p[start..<end])
}

@inline(__always)
private func string(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: p[start..<end]), as: UTF8.self)
}

/// Whether `p[start...]` equals `lowercase` ignoring ASCII case (`lowercase` is lower-case ASCII).
private func equalsLowercase(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ lowercase: StaticString) -> Bool {
    let count = lowercase.utf8CodeUnitCount
    let expected = lowercase.utf8Start
    for k in 0..<count where p[start + k] | 0x20 != expected[k] {
        return false
    }
    return true
}

/// `1*DIGIT` or a comma-separated list of identical ones (RFC 9110 §8.6); nil when invalid, -1 when the list
/// holds different values.
private func parseContentLength(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
    var result: Int?
    var i = start
    while true {
        while i < end, p[i] == sp || p[i] == tab { i += 1 }
        var value = 0
        var digits = 0
        while i < end, isDigit(p[i]) {
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int(p[i] &- zero))
            if o1 || o2 { return nil }
            value = sum
            digits += 1
            i += 1
        }
        if digits == 0 { return nil }
        if let r = result, r != value { return -1 }
        result = value
        while i < end, p[i] == sp || p[i] == tab { i += 1 }
        if i == end { return result }
        guard p[i] == UInt8(ascii: ",") else { return nil }
        i += 1
    }
}

/// Whether the comma-separated list in `p[start..<end]` holds the token `close` (ASCII case-insensitive).
private func listContainsClose(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
    var i = start
    while i < end {
        while i < end, p[i] == sp || p[i] == tab || p[i] == UInt8(ascii: ",") { i += 1 }
        let elementStart = i
        while i < end, p[i] != UInt8(ascii: ",") { i += 1 }
        var elementEnd = i
        while elementEnd > elementStart, p[elementEnd - 1] == sp || p[elementEnd - 1] == tab { elementEnd -= 1 }
        if elementEnd - elementStart == 5, equalsLowercase(p, elementStart, "close") { return true }
    }
    return false
}
