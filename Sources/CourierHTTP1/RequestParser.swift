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
        /// Reading the body with `bodyParser`.
        case body
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
    /// Fed and not consumed (error offsets count from the request's first byte); empty while the body parser reads.
    private var input = ParserInput()
    private var sawEOF = false
    private var line: RequestLine?
    private var section: FieldSectionReader
    private var observer = RequestHeadObserver()
    /// The body's reader: the response parser's, past a head (bodies are framed alike).
    private var bodyParser: ResponseParser?
    private var keepAlive = true
    /// Body bytes of the current request so far.
    private var bodyBytes = 0

    package init(limits: Limits = Limits()) {
        self.limits = limits
        self.section = FieldSectionReader(.head, maxBytes: limits.maxHeadBytes, maxFieldCount: limits.maxHeaderCount)
    }

    /// True when no byte of a next request has arrived: a server waiting here is idle, not inside a request.
    package var isBetweenRequests: Bool {
        if case .head = state { return input.messageOffset == 0 && input.bytes.isEmpty }
        return false
    }

    /// Adds bytes received from the client.
    package mutating func feed(_ bytes: ArraySlice<UInt8>) {
        precondition(!sawEOF, "feed(_:) after eof()")
        if bodyParser != nil {
            bodyParser?.feed(bytes)
        } else {
            input.append(bytes)
        }
    }

    package mutating func feed(_ bytes: [UInt8]) { feed(bytes[...]) }

    /// The client closed its side: a request in progress becomes ``RequestParseError/Reason/truncated``; between
    /// requests, the parser ends quietly.
    package mutating func eof() {
        sawEOF = true
        bodyParser?.eof()
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
                input.messageOffset = 0
                line = nil
                section = FieldSectionReader(.head, maxBytes: limits.maxHeadBytes, maxFieldCount: limits.maxHeaderCount)
                observer = RequestHeadObserver()
                bodyBytes = 0
                return .end(keepAlive: keepAlive)
            case .head:
                if input.bytes.isEmpty {
                    guard sawEOF else { return nil }
                    if input.messageOffset == 0 {
                        state = .closed
                        return nil
                    }
                    throw fail(.truncated, at: input.messageOffset)
                }
                if let event = try parseHead() { return event }
                if sawEOF { throw fail(.truncated, at: input.messageOffset + input.bytes.count) }
                return nil
            case .body:
                if let event = try nextBodyEvent() { return event }
                if case .body = state { return nil }
            }
        }
    }

    /// The body parser's next event, as the request's: body bytes counted against the limit, trailers dropped,
    /// and at its end the bytes after the body taken back for the next request.
    private mutating func nextBodyEvent() throws(RequestParseError) -> RequestEvent? {
        guard var parser = bodyParser else { preconditionFailure("a body without its parser") }
        bodyParser = nil
        while true {
            let event: ResponseEvent?
            do {
                event = try parser.next()
            } catch {
                let at = error.offset.map { input.messageOffset + $0 }
                if case .truncatedBody = error.reason { throw fail(.truncated, at: at) }
                throw fail(.message(error.reason), at: at)
            }
            switch event {
            case nil, .head:
                bodyParser = parser
                return nil
            case .trailers:
                continue
            case .body(let bytes):
                let room = limits.maxBodyBytes - bodyBytes
                guard bytes.count <= room else {
                    // The bytes up to the limit first, then the refusal: the same whatever the reads' sizes.
                    let error = fail(.bodyTooLarge(limit: limits.maxBodyBytes), at: input.messageOffset)
                    if room > 0 { return .body(bytes.prefix(room)) }
                    throw error
                }
                bodyBytes += bytes.count
                bodyParser = parser
                return .body(bytes)
            case .end:
                input.bytes = parser.takeUnconsumedBytes()
                state = .ending
                return nil
            }
        }
    }

    // MARK: - Failures and sections

    private mutating func fail(_ reason: RequestParseError.Reason, at offset: Int?) -> RequestParseError {
        let error = RequestParseError(reason, offset: offset)
        state = .failed
        failure = error
        return error
    }

    /// Applies where a field section's reading stopped (``ParserInput/settle(_:count:)``); true once complete.
    private mutating func settle(_ progress: FieldSectionReader.Progress, count: Int) throws(RequestParseError) -> Bool {
        do { return try input.settle(progress, count: count).get() } catch { throw fail(.message(error.reason), at: error.offset) }
    }

    // MARK: - Head

    private enum HeadProgress {
        case section(FieldSectionReader.Progress)
        case requestLine(RequestParseError.Reason, at: Int)
    }

    private mutating func parseHead() throws(RequestParseError) -> RequestEvent? {
        let bytes = input.bytes
        let progress: HeadProgress = bytes.withUnsafeBufferPointer { p in
            var lineStart = 0
            var searchFrom = input.scanned
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
            throw fail(reason, at: input.messageOffset + at)
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
        let headEnd = input.messageOffset
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
            startBody(length: nil)
        } else if let length = framing.contentLength, length > 0 {
            guard length <= limits.maxBodyBytes else { throw fail(.bodyTooLarge(limit: limits.maxBodyBytes), at: headEnd) }
            startBody(length: length)
        } else {
            state = .ending
        }
        let head = HTTPRequestHead(method: line.method, target: line.target, headers: section.fields)
        return .head(head, version: line.version)
    }

    // MARK: - Body

    /// Hands the bytes after the head to a body parser for `length` bytes (nil: chunked).
    private mutating func startBody(length: Int?) {
        var parser = ResponseParser(bodyOfLength: length, limits: ResponseParser.Limits(
            maxHeaderCount: limits.maxHeaderCount, maxChunkExtensionBytes: limits.maxChunkExtensionBytes,
            maxTrailerBytes: limits.maxTrailerBytes
        ))
        parser.feed(input.bytes)
        if sawEOF { parser.eof() }
        input.bytes = []
        input.scanned = 0
        bodyParser = parser
        state = .body
    }
}
