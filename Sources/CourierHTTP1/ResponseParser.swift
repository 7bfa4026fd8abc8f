package import CourierCore

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
package struct ResponseParser: Sendable {
    /// Bounds on what a server can make the parser buffer or process. Exceeding one is a
    /// ``ResponseParseError``, never a silent truncation.
    package struct Limits: Hashable, Sendable {
        /// Status line plus header section, CRLFs included, per response head (1xx heads each get their own
        /// budget). Default 64 KiB.
        package var maxHeadBytes: Int
        /// Header field lines per head, and trailer field lines per message. Default 100.
        package var maxHeaderCount: Int
        /// Bytes of extensions on one chunk-size line (everything after the size). Default 4 KiB.
        package var maxChunkExtensionBytes: Int
        /// Trailer section, CRLFs included. Default 16 KiB.
        package var maxTrailerBytes: Int
        /// 1xx interim responses (100, 102, 103, ...) tolerated before the final one. Default 16.
        package var maxInterimResponses: Int

        package init(
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

    /// The head being parsed.
    private struct HeadBuilder: Sendable {
        var version: HTTPVersion?
        var status = 0
        var reason = ""
        /// The status line and the header section (each head gets the whole budget).
        var section: FieldSectionReader
        var framing = ResponseFraming.Observer()

        init(_ limits: Limits) {
            section = FieldSectionReader(.head, maxBytes: limits.maxHeadBytes, maxFieldCount: limits.maxHeaderCount)
        }
    }

    /// The limits in force.
    package let limits: Limits

    private var state: State = .head
    /// The request was `HEAD` (no body in the response) / `CONNECT` (a 2xx starts a tunnel).
    private var requestIsHead: Bool
    private var requestIsConnect: Bool
    private var failure: ResponseParseError?
    private var input = ParserInput()
    private var sawEOF = false
    private var builder: HeadBuilder
    private var interimResponses = 0
    private var keepAlive = true
    private var trailers: FieldSectionReader

    /// A parser for the response to a request made with `requestMethod` (a `HEAD` response has no body).
    package init(requestMethod: HTTPMethod = .get, limits: Limits = Limits()) {
        self.requestIsHead = requestMethod.rawValue == "HEAD"
        self.requestIsConnect = requestMethod.rawValue == "CONNECT"
        self.limits = limits
        self.builder = HeadBuilder(limits)
        self.trailers = Self.trailerReader(limits)
    }

    /// A parser already past a message's head, reading a body of `length` bytes (nil: chunked, with trailers).
    /// Request bodies are framed as response bodies are (RFC 9112 §6.2, §7.1): ``RequestParser`` reads them with
    /// this, then takes back what follows (``takeUnconsumedBytes()``).
    init(bodyOfLength length: Int?, limits: Limits) {
        self.init(requestMethod: .get, limits: limits)
        state = length.map { .fixedBody(remaining: $0) } ?? .chunkSize
    }

    /// The bytes fed and not consumed (those after the message once it ended), handed back and forgotten.
    mutating func takeUnconsumedBytes() -> ArraySlice<UInt8> {
        defer {
            input.bytes = []
            input.scanned = 0
        }
        return input.bytes
    }

    private static func trailerReader(_ limits: Limits) -> FieldSectionReader {
        FieldSectionReader(.trailers, maxBytes: limits.maxTrailerBytes, maxFieldCount: limits.maxHeaderCount)
    }

    /// True between messages: the previous response ended (or none started) and no event is pending.
    package var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Bytes fed but not yet consumed. Non-zero while idle means the server sent bytes nobody asked for.
    package var bufferedByteCount: Int { input.bytes.count }

    /// Whether any byte of the current response has been consumed or is buffered.
    package var hasReceivedResponseBytes: Bool { input.messageOffset > 0 || !input.bytes.isEmpty }

    /// Prepares for the response to the next request on the same connection, made with `method`.
    /// Only legal once the previous response ended with `keepAlive == true`.
    package mutating func expectResponse(to method: HTTPMethod) {
        guard case .idle = state, keepAlive, !sawEOF else {
            preconditionFailure("expectResponse(to:) needs an idle, reusable parser; state: \(state)")
        }
        requestIsHead = method.rawValue == "HEAD"
        requestIsConnect = method.rawValue == "CONNECT"
        state = .head
    }

    /// Adds bytes received from the server. Cheap: when nothing is buffered the slice is kept as is.
    package mutating func feed(_ bytes: ArraySlice<UInt8>) {
        precondition(!sawEOF, "feed(_:) after eof()")
        input.append(bytes)
    }

    /// Adds bytes received from the server.
    package mutating func feed(_ bytes: [UInt8]) { feed(bytes[...]) }

    /// In a `Content-Length` body with nothing buffered: the body bytes still to come, which the caller may then
    /// receive straight into its own buffer (see ``bodyReceivedDirectly(_:)``) instead of feeding them through
    /// the parser. Nil in any other state, or once the server closed the connection.
    package var directBodyBytesRemaining: Int? {
        guard case .fixedBody(let remaining) = state, remaining > 0, input.bytes.isEmpty, !sawEOF else { return nil }
        return remaining
    }

    /// Records `count` body bytes the caller received itself while ``directBodyBytesRemaining`` allowed it (at
    /// most that many). When the last one arrives, the next ``next()`` returns `.end`.
    package mutating func bodyReceivedDirectly(_ count: Int) {
        guard let remaining = directBodyBytesRemaining, count > 0, count <= remaining else {
            preconditionFailure("bodyReceivedDirectly(\(count)) outside a Content-Length body awaiting that many bytes")
        }
        input.messageOffset += count
        state = .fixedBody(remaining: remaining - count)
    }

    /// Records that the server closed the connection (read returned 0). A close-delimited body then ends;
    /// anything else unfinished becomes an error on the next call to ``next()``.
    package mutating func eof() { sawEOF = true }

    /// Feeds `bytes` and returns every event they complete (a convenience for tests and simple callers).
    package mutating func parse(_ bytes: [UInt8]) throws(ResponseParseError) -> [ResponseEvent] {
        feed(bytes)
        var events: [ResponseEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }

    /// The next event, or nil when more bytes (or ``eof()``) are needed, or the parser is idle.
    package mutating func next() throws(ResponseParseError) -> ResponseEvent? {
        while true {
            switch state {
            case .failed:
                throw failure ?? ResponseParseError(.invalidStatusLine)
            case .idle:
                return nil
            case .ending:
                state = .idle
                input.messageOffset = 0
                builder = HeadBuilder(limits)
                interimResponses = 0
                trailers = Self.trailerReader(limits)
                return .end(keepAlive: keepAlive)
            case .head:
                if input.bytes.isEmpty {
                    if sawEOF {
                        throw fail(input.messageOffset == 0 ? .closedBeforeResponse : .truncatedHead, at: input.messageOffset)
                    }
                    return nil
                }
                if let head = try parseHead() { return .head(head) }
                if sawEOF { throw fail(.truncatedHead, at: input.messageOffset + input.bytes.count) }
                return nil
            case .fixedBody(let remaining):
                if remaining == 0 {
                    state = .ending
                    continue
                }
                if input.bytes.isEmpty {
                    if sawEOF { throw fail(.truncatedBody(missing: remaining), at: input.messageOffset) }
                    return nil
                }
                let slice = input.take(min(remaining, input.bytes.count))
                state = .fixedBody(remaining: remaining - slice.count)
                return .body(slice)
            case .closeDelimited:
                if input.bytes.isEmpty {
                    if sawEOF {
                        state = .ending
                        continue
                    }
                    return nil
                }
                return .body(input.take(input.bytes.count))
            case .chunkSize:
                guard let size = try parseChunkSizeLine() else {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: input.messageOffset + input.bytes.count) }
                    return nil
                }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                if input.bytes.isEmpty {
                    if sawEOF { throw fail(.truncatedBody(missing: remaining), at: input.messageOffset) }
                    return nil
                }
                let slice = input.take(min(remaining, input.bytes.count))
                let left = remaining - slice.count
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(slice)
            case .chunkDataEnd:
                let start = input.bytes.startIndex
                if input.bytes.count >= 1, input.bytes[start] != cr {
                    throw fail(.missingChunkTerminator, at: input.messageOffset)
                }
                if input.bytes.count >= 2, input.bytes[start + 1] != lf {
                    throw fail(.missingChunkTerminator, at: input.messageOffset + 1)
                }
                if input.bytes.count < 2 {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: input.messageOffset + input.bytes.count) }
                    return nil
                }
                _ = input.take(2)
                state = .chunkSize
            case .trailers:
                guard try parseTrailers() else {
                    if sawEOF { throw fail(.truncatedBody(missing: nil), at: input.messageOffset + input.bytes.count) }
                    return nil
                }
                state = .ending
                if !trailers.fields.isEmpty { return .trailers(trailers.fields) }
            }
        }
    }

    // MARK: - Buffer handling

    private mutating func fail(_ reason: ResponseParseError.Reason, at offset: Int?) -> ResponseParseError {
        let error = ResponseParseError(reason, offset: offset)
        state = .failed
        failure = error
        return error
    }

    // MARK: - Head

    /// Applies where a field section's reading stopped (``ParserInput/settle(_:count:)``); true once complete.
    private mutating func settle(_ progress: FieldSectionReader.Progress, count: Int) throws(ResponseParseError) -> Bool {
        do { return try input.settle(progress, count: count).get() } catch { throw fail(error.reason, at: error.offset) }
    }

    /// Parses complete lines of the head (interim heads are read and skipped); returns the final head once its
    /// empty line is seen.
    private mutating func parseHead() throws(ResponseParseError) -> HTTPResponseHead? {
        let bytes = input.bytes
        let progress: FieldSectionReader.Progress = bytes.withUnsafeBufferPointer { p in
            var lineStart = 0
            var searchFrom = input.scanned
            while true {
                if builder.version == nil {
                    switch builder.section.nextLine(p, from: lineStart, searchingFrom: searchFrom) {
                    case .incomplete:
                        return .incomplete(lineStart: lineStart)
                    case .failed(let reason, let at):
                        return .failed(reason, at: at)
                    case .complete(let end):
                        if let (reason, at) = parseStatusLine(p, lineStart, end) { return .failed(reason, at: at) }
                        lineStart = end + 2
                        searchFrom = lineStart
                    }
                }
                let progress = builder.section.read(p, from: lineStart, searchingFrom: searchFrom, observer: &builder.framing)
                guard case .complete(let next) = progress, builder.status < 200 else { return progress }
                interimResponses += 1
                if interimResponses > limits.maxInterimResponses {
                    return .failed(.tooManyInterimResponses(limit: limits.maxInterimResponses), at: next - 2)
                }
                builder = HeadBuilder(limits)
                lineStart = next
                searchFrom = next
            }
        }
        guard try settle(progress, count: bytes.count) else { return nil }
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
        builder.section.reserveCapacity(fields: 16, bytes: 512)
        return nil
    }

    /// Decides the body's framing (RFC 9112 §6.3) once the final head is complete.
    private mutating func finishHead() throws(ResponseParseError) -> HTTPResponseHead {
        let version = builder.version ?? .http1_1
        let head = HTTPResponseHead(
            version: version,
            status: builder.status,
            reason: builder.reason,
            headers: builder.section.fields
        )
        let headEnd = input.messageOffset
        let framing = builder.framing.framing
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
        let bytes = input.bytes
        let extLimit = limits.maxChunkExtensionBytes
        var scanned = input.scanned
        let result = bytes.withUnsafeBufferPointer { ChunkSizeLine.read($0, scanned: &scanned, extLimit: extLimit) }
        input.scanned = scanned
        switch result {
        case nil:
            return nil
        case .failure(let error):
            throw fail(error.reason, at: input.messageOffset + error.at)
        case .success(let line):
            input.consume(line.end)
            return line.size
        }
    }

    /// Parses trailer lines; true once the empty line ending the trailer section was consumed.
    private mutating func parseTrailers() throws(ResponseParseError) -> Bool {
        let bytes = input.bytes
        let progress = bytes.withUnsafeBufferPointer { p in
            var noObserver = FieldSectionReader.NoObserver()
            return trailers.read(p, from: 0, searchingFrom: input.scanned, observer: &noObserver)
        }
        return try settle(progress, count: bytes.count)
    }
}
