import CourierCore
import CourierHTTP1

/// One HTTP/1.1 connection: a byte stream plus the codec's state machine, parser and encoder. It performs the
/// state machine's actions (the I/O); the machine decides reuse and failure.
///
/// Ownership, not locking, makes it safe: the pool hands a connection to exactly one request at a time
/// (a lease), and only that request's task touches the mutable state until it releases the connection.
final class HTTP1Connection: @unchecked Sendable {
    let id: ConnectionPoolStateMachine.ConnectionID
    let key: PoolKey
    let stream: any ByteStream
    private var machine = HTTP1ConnectionStateMachine()
    private var parser: ResponseParser
    private var encoder = RequestEncoder()
    private var parserPrimed = false
    /// Set-up timings, reported by the first request that uses the connection.
    var setup: (dns: Duration?, connect: Duration?, tls: Duration?)?
    /// Bytes moved for the current request.
    private(set) var bytesSent: Int64 = 0
    private(set) var bytesReceived: Int64 = 0
    private(set) var firstByteAt: ContinuousClock.Instant?
    private let readSize: Int
    /// Reused for each request's head (and a small body sent with it).
    private var headBuffer: [UInt8] = []

    init(id: ConnectionPoolStateMachine.ConnectionID, key: PoolKey, stream: any ByteStream, limits: ResponseParser.Limits, readSize: Int) {
        self.id = id
        self.key = key
        self.stream = stream
        self.parser = ResponseParser(limits: limits)
        self.readSize = readSize
    }

    /// Whether the connection carried a request before the current one.
    var wasReused: Bool { machine.completedRequestCount > 0 }

    // MARK: - Sending

    /// Starts a request: writes the head and, for a byte body, the body, in one write when it is small.
    ///
    /// A request without a body or with a small one is encoded by a synchronous helper and written at once: an
    /// async function keeps each of its temporaries in a task allocation, a synchronous one on the stack.
    nonisolated(nonsending) func send(
        head: HTTPRequestHead,
        hostHeader: String,
        body: HTTPRequest.Body,
        timeout: () throws -> Duration
    ) async throws {
        guard let whole = try encodeWhole(head: head, hostHeader: hostHeader, body: body) else {
            return try await sendInParts(head: head, hostHeader: hostHeader, body: body, timeout: timeout)
        }
        do {
            try await stream.write(whole, timeout: timeout())
        } catch {
            encoder.reset()
            recycle(consume whole)
            throw error
        }
        var hasBody = false
        if case .bytes = body { hasBody = true }
        wholeWritten(consume whole, hasBody: hasBody)
    }

    /// Resets the per-request state and starts the machine's request (shared by both ways of sending).
    private func begin(head: HTTPRequestHead, body: HTTPRequest.Body) -> RequestBodyFraming {
        bytesSent = 0
        bytesReceived = 0
        firstByteAt = nil
        // A request that says `Connection: close` ends the connection after its response (RFC 9112 §9.6): the
        // server may close without saying so in the response.
        requestAsksToClose = head.headers.contains("connection") && head.headers.tokens(for: "connection").contains("close")
        if parserPrimed { parser.expectResponse(to: head.method) } else {
            parser = ResponseParser(requestMethod: head.method, limits: parser.limits)
            parserPrimed = true
        }
        let hasBody: Bool
        let framing: RequestBodyFraming
        switch body {
        case .none:
            hasBody = false
            framing = .none
        case .bytes(let bytes):
            hasBody = true
            framing = .contentLength(bytes.count)
        case .stream:
            hasBody = true
            framing = .chunked
        }
        _ = machine.startRequest(method: head.method, hasBody: hasBody)
        return framing
    }

    /// The whole request (head, and a body of at most 64 KiB) encoded in the buffer kept from the previous
    /// request (no allocation once it is warm); nil, having changed nothing, when the body is streamed or larger.
    @inline(never)
    private func encodeWhole(head: HTTPRequestHead, hostHeader: String, body: HTTPRequest.Body) throws -> [UInt8]? {
        switch body {
        case .none: break
        case .bytes(let bytes) where bytes.count <= 64 * 1024: break
        default: return nil
        }
        let framing = begin(head: head, body: body)
        var buffer: [UInt8] = []
        swap(&buffer, &headBuffer)
        buffer.reserveCapacity(512)
        do {
            try encoder.writeHead(head, host: hostHeader, body: framing, into: &buffer)
        } catch {
            recycle(consume buffer)
            throw error
        }
        do {
            if case .bytes(let bytes) = body { try encoder.writeBodyPart(bytes, into: &buffer) }
            try encoder.writeEnd(into: &buffer)
        } catch {
            encoder.reset()
            recycle(consume buffer)
            throw error
        }
        return buffer
    }

    /// After the whole request was written: the machine's bookkeeping, and the buffer kept for the next one.
    @inline(never)
    private func wholeWritten(_ buffer: consuming [UInt8], hasBody: Bool) {
        bytesSent += Int64(buffer.count)
        _ = machine.requestHeadWritten()
        if hasBody { _ = machine.requestBodyEnded() }
        recycle(consume buffer)
    }

    /// Keeps a request buffer's storage for the next request (unless a large body made it large). The buffer is
    /// consumed: emptying a copy that is still referenced elsewhere would allocate a new one.
    private func recycle(_ buffer: consuming [UInt8]) {
        guard buffer.capacity <= 16 * 1024 else { return }
        buffer.removeAll(keepingCapacity: true)
        headBuffer = buffer
    }

    /// A request whose body is streamed or over 64 KiB: the head first, then the body in parts.
    nonisolated(nonsending) private func sendInParts(
        head: HTTPRequestHead,
        hostHeader: String,
        body: HTTPRequest.Body,
        timeout: () throws -> Duration
    ) async throws {
        let framing = begin(head: head, body: body)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(512)
        try encoder.writeHead(head, host: hostHeader, body: framing, into: &buffer)
        do {
            switch body {
            case .none:
                preconditionFailure("a request without a body is sent whole")
            case .bytes(let bytes):
                try await write(buffer, timeout: timeout())
                _ = machine.requestHeadWritten()
                var part: [UInt8] = []
                try encoder.writeBodyPart(bytes, into: &part)
                try encoder.writeEnd(into: &part)
                try await write(part, timeout: timeout())
                _ = machine.requestBodyEnded()
            case .stream(let parts):
                try await write(buffer, timeout: timeout())
                _ = machine.requestHeadWritten()
                for try await chunk in parts {
                    var framed: [UInt8] = []
                    try encoder.writeBodyPart(chunk, into: &framed)
                    if !framed.isEmpty { try await write(framed, timeout: timeout()) }
                }
                var end: [UInt8] = []
                try encoder.writeEnd(into: &end)
                try await write(end, timeout: timeout())
                _ = machine.requestBodyEnded()
            }
        } catch {
            encoder.reset()
            throw error
        }
    }

    nonisolated(nonsending) private func write(_ bytes: [UInt8], timeout: Duration) async throws {
        try await stream.write(bytes, timeout: timeout)
        bytesSent += Int64(bytes.count)
    }

    // MARK: - Receiving

    /// The next response event, reading from the stream when the parser needs more bytes.
    /// `timeout` is asked before each read (it shrinks as the request's total deadline nears).
    ///
    /// The parsing and bookkeeping live in synchronous helpers: an async function keeps each of its temporaries
    /// in a task allocation (about eight per call here when they were inline), a synchronous one on the stack.
    nonisolated(nonsending) func nextEvent(timeout: () throws -> Duration) async throws -> ResponseEvent {
        while true {
            if let event = try takeEvent() { return event }
            let bytes = try await stream.read(maxBytes: readSize, timeout: timeout())
            try absorb(bytes)
        }
    }

    /// Whether the rest of the current body can be received straight into the caller's array: the parser is in
    /// a `Content-Length` body with nothing buffered, and at most `limit` bytes of it remain.
    func canReceiveBodyDirectly(limit: Int) -> Bool {
        guard let remaining = parser.directBodyBytesRemaining else { return false }
        return remaining <= limit
    }

    /// Receives the rest of a `Content-Length` body straight into `body`, appended (call only when
    /// ``canReceiveBodyDirectly(limit:)`` said so): each `recv` fills as much of the array as the socket holds,
    /// with no intermediate buffer, no copy and no allocation per read. The parser is told about every byte, so
    /// the next ``nextEvent(timeout:)`` ends the response, or, when the server closed the connection first,
    /// reports the truncated body. On an error `body` holds a partial body (the caller discards it).
    nonisolated(nonsending) func receiveBodyDirectly(into body: inout [UInt8], timeout: () throws -> Duration) async throws {
        guard let remaining = parser.directBodyBytesRemaining else { return }
        var offset = body.count
        body.append(contentsOf: repeatElement(0, count: remaining))
        while offset < body.count {
            let count = try await stream.read(into: &body, at: offset, timeout: timeout())
            if count == 0 {
                body.removeLast(body.count - offset)
                parser.eof()
                return
            }
            offset += count
            bytesReceived += Int64(count)
            parser.bodyReceivedDirectly(count)
        }
    }

    /// The next event the parser has from the bytes already received, with the machine told about it.
    @inline(never)
    private func takeEvent() throws -> ResponseEvent? {
        guard let event = try parser.next() else { return nil }
        switch event {
        case .head(let head):
            _ = machine.responseHeadReceived(head)
        case .body(let bytes):
            _ = machine.responseBodyReceived(bytes)
        case .trailers(let trailers):
            _ = machine.responseTrailersReceived(trailers)
        case .end(let keepAlive):
            if case .succeedRequest(let disposition) = machine.responseEnded(keepAlive: keepAlive) {
                reusable = disposition == .reuse && parser.bufferedByteCount == 0 && !requestAsksToClose
            }
        }
        return event
    }

    /// Feeds what a read returned to the parser (empty: the server closed the connection).
    @inline(never)
    private func absorb(_ bytes: [UInt8]) throws {
        if bytes.isEmpty {
            // The server closed before answering: on a kept-alive connection that is the idle-close race,
            // which the client retries on a fresh connection, not a framing error.
            if firstByteAt == nil { throw ClosedBeforeResponse() }
            parser.eof()
        } else {
            if firstByteAt == nil {
                firstByteAt = .now
                _ = machine.responseBytesReceived()
            }
            bytesReceived += Int64(bytes.count)
            parser.feed(bytes)
        }
    }

    /// After `.end`: whether the connection may carry another request.
    private(set) var reusable = false
    private var requestAsksToClose = false

    /// Records a failure of the current request; returns the machine's verdict (for the fresh-connection retry)
    /// and closes the stream.
    func fail(_ cause: HTTP1ConnectionStateMachine.FailureCause) -> HTTP1ConnectionStateMachine.RequestFailure? {
        let action = machine.isClosed ? nil : machine.connectionFailed(cause)
        stream.close()
        reusable = false
        if case .failRequest(let failure) = action { return failure }
        return nil
    }

    /// Abandons the current request (its body was not read to the end): the connection cannot be reused.
    func abandon() {
        if !machine.isIdle && !machine.isClosed { _ = machine.cancelRequest() }
        stream.close()
        reusable = false
    }
}

/// The server closed the connection before sending any byte of the response.
struct ClosedBeforeResponse: Error {}
