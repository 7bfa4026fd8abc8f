internal import CourierCore

/// An incremental HTTP/1.1 request parser (RFC 9112) for a server: bytes in, ``RequestEvent``s out, no I/O.
///
/// ```swift
/// var parser = RequestParser()
/// parser.feed(bytesFromSocket)
/// while let event = try parser.next() { ... }   // .head, .body..., .end(keepAlive:), then the next request
/// parser.eof()                                   // when the client closed its side
/// ```
///
/// Requests follow one another on a connection (keep-alive, pipelining): after `.end(keepAlive: true)` the next
/// call reads the next request from the bytes already fed. The field rules are the response parser's
/// (``FieldSectionReader``) with obs-fold refused; the body is `Content-Length` or `chunked` (with trailers, which
/// are read and dropped), none without either. A request with both `Content-Length` and `Transfer-Encoding`, a
/// coding other than exactly `chunked`, conflicting lengths, a missing or doubled `Host` is refused: smuggling
/// relies on two parties framing one message differently, and a refused request is framed by no one.
///
/// Bounded by ``Limits``: the head, the body and each chunk-size line; an incomplete line is all that is buffered
/// between feeds besides unread body bytes. Any error is thrown as ``RequestParseError`` (with the status to
/// answer), and again on every later call: the connection must be closed.
package struct RequestParser: Sendable {
    /// Bounds on what a client can make the parser buffer or accept.
    package struct Limits: Hashable, Sendable {
        /// Request line plus header section, CRLFs included. Default 16 KiB.
        package var maxHeadBytes: Int
        /// Header field lines per request, and trailer field lines. Default 100.
        package var maxHeaderCount: Int
        /// Body bytes per request (declared or chunked). Default 16 MiB.
        package var maxBodyBytes: Int
        /// Bytes of extensions on one chunk-size line. Default 1 KiB.
        package var maxChunkExtensionBytes: Int
        /// Trailer section, CRLFs included. Default 4 KiB.
        package var maxTrailerBytes: Int

        package init(
            maxHeadBytes: Int = 16 * 1024,
            maxHeaderCount: Int = 100,
            maxBodyBytes: Int = 16 << 20,
            maxChunkExtensionBytes: Int = 1024,
            maxTrailerBytes: Int = 4 * 1024
        ) {
            self.maxHeadBytes = maxHeadBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxBodyBytes = maxBodyBytes
            self.maxChunkExtensionBytes = maxChunkExtensionBytes
            self.maxTrailerBytes = maxTrailerBytes
        }
    }

    private enum State: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        /// The request is complete; its end event is still to be reported.
        case ending
        /// After a request without keep-alive, or a clean end of input between requests.
        case closed
        case failed
    }

    /// The request line once read.
    private struct RequestLine: Sendable {
        var method: HTTPMethod
        var target: String
        var version: HTTPVersion
    }

    package let limits: Limits
    private var state = State.head
    private var failure: RequestParseError?
    private var buffer: ArraySlice<UInt8> = []
    /// Bytes at the front of `buffer` known to hold no LF.
    private var scanned = 0
    private var sawEOF = false
    /// Bytes of the current request consumed so far (error offsets count from its first byte).
    private var messageOffset = 0
    private var line: RequestLine?
    private var section: FieldSectionReader
    private var observer = RequestHeadObserver()
    private var trailers: FieldSectionReader
    private var keepAlive = true
    /// Chunk bytes of the current body so far.
    private var chunkedBytes = 0

    package init(limits: Limits = Limits()) {
        self.limits = limits
        self.section = FieldSectionReader(.head, maxBytes: limits.maxHeadBytes, maxFieldCount: limits.maxHeaderCount)
        self.trailers = FieldSectionReader(.trailers, maxBytes: limits.maxTrailerBytes, maxFieldCount: limits.maxHeaderCount)
    }

    /// True when no byte of a next request has arrived: a server waiting here is idle, not inside a request.
    package var isBetweenRequests: Bool {
        if case .head = state { return messageOffset == 0 && buffer.isEmpty }
        return false
    }

    /// Adds bytes received from the client.
    package mutating func feed(_ bytes: ArraySlice<UInt8>) {
        precondition(!sawEOF, "feed(_:) after eof()")
        if buffer.isEmpty {
            buffer = bytes
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    package mutating func feed(_ bytes: [UInt8]) { feed(bytes[...]) }

    /// The client closed its side: a request in progress becomes ``RequestParseError/Reason/truncated``; between
    /// requests, the parser ends quietly.
    package mutating func eof() { sawEOF = true }

    /// Feeds `bytes` and returns every event they complete (for tests and simple callers).
    package mutating func parse(_ bytes: [UInt8]) throws(RequestParseError) -> [RequestEvent] {
        feed(bytes)
        var events: [RequestEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }

    /// The next event; nil when more bytes (or ``eof()``) are needed, or once the connection is done.
    package mutating func next() throws(RequestParseError) -> RequestEvent? {
        while true {
            switch state {
            case .failed:
                throw failure ?? RequestParseError(.invalidRequestLine)
            case .closed:
                return nil
            case .ending:
                state = keepAlive ? .head : .closed
                messageOffset = 0
                line = nil
                section = FieldSectionReader(.head, maxBytes: limits.maxHeadBytes, maxFieldCount: limits.maxHeaderCount)
                observer = RequestHeadObserver()
                trailers = FieldSectionReader(.trailers, maxBytes: limits.maxTrailerBytes, maxFieldCount: limits.maxHeaderCount)
                chunkedBytes = 0
                return .end(keepAlive: keepAlive)
            case .head:
                if buffer.isEmpty {
                    guard sawEOF else { return nil }
                    if messageOffset == 0 {
                        state = .closed
                        return nil
                    }
                    throw fail(.truncated, at: messageOffset)
                }
                if let event = try parseHead() { return event }
                if sawEOF { throw fail(.truncated, at: messageOffset + buffer.count) }
                return nil
            case .fixedBody(let remaining):
                if remaining == 0 {
                    state = .ending
                    continue
                }
                guard let slice = try takeBody(remaining) else { return nil }
                state = .fixedBody(remaining: remaining - slice.count)
                return .body(slice)
            case .chunkSize:
                guard let size = try parseChunkSizeLine() else {
                    if sawEOF { throw fail(.truncated, at: messageOffset + buffer.count) }
                    return nil
                }
                guard size <= limits.maxBodyBytes - chunkedBytes else {
                    throw fail(.bodyTooLarge(limit: limits.maxBodyBytes), at: messageOffset)
                }
                chunkedBytes += size
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                guard let slice = try takeBody(remaining) else { return nil }
                let left = remaining - slice.count
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(slice)
            case .chunkDataEnd:
                let start = buffer.startIndex
                if buffer.count >= 1, buffer[start] != cr { throw fail(.message(.missingChunkTerminator), at: messageOffset) }
                if buffer.count >= 2, buffer[start + 1] != lf {
                    throw fail(.message(.missingChunkTerminator), at: messageOffset + 1)
                }
                if buffer.count < 2 {
                    if sawEOF { throw fail(.truncated, at: messageOffset + buffer.count) }
                    return nil
                }
                consume(2)
                state = .chunkSize
            case .trailers:
                let bytes = buffer
                let progress = bytes.withUnsafeBufferPointer { p in
                    var noObserver = FieldSectionReader.NoObserver()
                    return trailers.read(p, from: 0, searchingFrom: scanned, observer: &noObserver)
                }
                guard try settle(progress, count: bytes.count) else {
                    if sawEOF { throw fail(.truncated, at: messageOffset + buffer.count) }
                    return nil
                }
                state = .ending
            }
        }
    }

    // MARK: - Buffer

    /// Up to `remaining` buffered body bytes; nil when none are buffered (an error at the end of input).
    private mutating func takeBody(_ remaining: Int) throws(RequestParseError) -> ArraySlice<UInt8>? {
        if buffer.isEmpty {
            if sawEOF { throw fail(.truncated, at: messageOffset) }
            return nil
        }
        let slice = buffer.prefix(remaining)
        consume(slice.count)
        return slice
    }

    private mutating func consume(_ count: Int) {
        messageOffset += count
        scanned = 0
        buffer = count == buffer.count ? [] : buffer.dropFirst(count)
    }

    private mutating func fail(_ reason: RequestParseError.Reason, at offset: Int?) -> RequestParseError {
        let error = RequestParseError(reason, offset: offset)
        state = .failed
        failure = error
        return error
    }

    /// Keeps an incomplete line for the next feed, throws a failure, or consumes a complete section.
    private mutating func settle(_ progress: FieldSectionReader.Progress, count: Int) throws(RequestParseError) -> Bool {
        switch progress {
        case .incomplete(let lineStart):
            if lineStart > 0 { consume(lineStart) }
            scanned = count - lineStart
            return false
        case .failed(let reason, let at):
            throw fail(.message(reason), at: messageOffset + at)
        case .complete(let next):
            consume(next)
            return true
        }
    }

    // MARK: - Head

    private enum HeadProgress {
        case section(FieldSectionReader.Progress)
        case requestLine(RequestParseError.Reason, at: Int)
    }

    private mutating func parseHead() throws(RequestParseError) -> RequestEvent? {
        let bytes = buffer
        let progress: HeadProgress = bytes.withUnsafeBufferPointer { p in
            var lineStart = 0
            var searchFrom = scanned
            while line == nil {
                switch section.nextLine(p, from: lineStart, searchingFrom: searchFrom) {
                case .incomplete:
                    return .section(.incomplete(lineStart: lineStart))
                case .failed(let reason, let at):
                    return .section(.failed(reason, at: at))
                case .complete(let end):
                    // Empty lines before the request line are skipped (RFC 9112 §2.2); they count against the head.
                    if end > lineStart, let (reason, at) = parseRequestLine(p, lineStart, end) {
                        return .requestLine(reason, at: at)
                    }
                    lineStart = end + 2
                    searchFrom = lineStart
                }
            }
            return .section(section.read(p, from: lineStart, searchingFrom: searchFrom, observer: &observer))
        }
        switch progress {
        case .requestLine(let reason, let at):
            throw fail(reason, at: messageOffset + at)
        case .section(let progress):
            guard try settle(progress, count: bytes.count) else { return nil }
        }
        return try finishHead()
    }

    /// `method SP request-target SP HTTP/1.x`; the error and its index, if any.
    private mutating func parseRequestLine(
        _ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> (RequestParseError.Reason, Int)? {
        var i = start
        while i < end, HTTPToken.isTokenCharacter(p[i]) { i += 1 }
        guard i > start, i < end, p[i] == sp else { return (.invalidRequestLine, i) }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < end, p[i] > sp, p[i] < 0x7F { i += 1 }
        guard i > targetStart, i < end, p[i] == sp else { return (.invalidRequestLine, i) }
        let targetEnd = i
        i += 1
        guard end - i == 8, p[i] == UInt8(ascii: "H"), p[i + 1] == UInt8(ascii: "T"), p[i + 2] == UInt8(ascii: "T"),
            p[i + 3] == UInt8(ascii: "P"), p[i + 4] == UInt8(ascii: "/"), isDigit(p[i + 5]), p[i + 6] == UInt8(ascii: "."),
            isDigit(p[i + 7])
        else { return (.invalidRequestLine, i) }
        guard p[i + 5] == UInt8(ascii: "1") else { return (.unsupportedVersion, i + 5) }
        let target = string(p, targetStart, targetEnd)
        let isOrigin = p[targetStart] == UInt8(ascii: "/")
        let isAsterisk = target == "*"
        let isAbsolute = target.hasPrefix("http://") || target.hasPrefix("https://")
        guard isOrigin || isAsterisk || isAbsolute else { return (.invalidRequestTarget, targetStart) }
        line = RequestLine(
            method: HTTPMethod(string(p, start, methodEnd)), target: target,
            version: HTTPVersion(major: 1, minor: Int(p[i + 7] &- zero))
        )
        return nil
    }

    /// Decides the body's framing (RFC 9112 §6.3, for requests) once the head is complete.
    private mutating func finishHead() throws(RequestParseError) -> RequestEvent {
        guard let line else { preconditionFailure("finishHead without a request line") }
        let headEnd = messageOffset
        let framing = observer.framing.framing
        keepAlive = line.version.minor >= 1 && !framing.connectionClose
        if observer.hostCount > 1 { throw fail(.multipleHosts, at: headEnd) }
        if observer.hostCount == 0, line.version.minor >= 1 { throw fail(.missingHost, at: headEnd) }
        if framing.transferEncodingCount > 0 {
            if line.version.minor == 0 { throw fail(.message(.transferEncodingInHTTP10), at: headEnd) }
            if framing.contentLength != nil { throw fail(.message(.contentLengthWithTransferEncoding), at: headEnd) }
            guard framing.transferEncodingIsChunked else {
                throw fail(.message(.unsupportedTransferEncoding(framing.transferEncodings)), at: headEnd)
            }
            state = .chunkSize
        } else {
            let length = framing.contentLength ?? 0
            guard length <= limits.maxBodyBytes else { throw fail(.bodyTooLarge(limit: limits.maxBodyBytes), at: headEnd) }
            state = .fixedBody(remaining: length)
        }
        let head = HTTPRequestHead(method: line.method, target: line.target, headers: section.fields)
        return .head(head, version: line.version)
    }

    // MARK: - Chunked body

    private mutating func parseChunkSizeLine() throws(RequestParseError) -> Int? {
        let bytes = buffer
        let extLimit = limits.maxChunkExtensionBytes
        var scanned = self.scanned
        let result = bytes.withUnsafeBufferPointer { ChunkSizeLine.read($0, scanned: &scanned, extLimit: extLimit) }
        self.scanned = scanned
        switch result {
        case nil:
            return nil
        case .failure(let error):
            throw fail(.message(error.reason), at: messageOffset + error.at)
        case .success(let line):
            consume(line.end)
            return line.size
        }
    }
}
