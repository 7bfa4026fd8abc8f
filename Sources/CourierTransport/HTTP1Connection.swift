internal import CourierCore
internal import CourierHTTP1

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
    private(set) var firstByteAt: Deadline?
    private let readSize: Int
    /// Reused for each request's head (and a small body sent with it).
    private var headBuffer: [UInt8] = []
    /// Shown each request head as written (the client's ``HTTPClientConfiguration/exchangeObserver``).
    var observer: (any ExchangeObserver)?

    init(id: ConnectionPoolStateMachine.ConnectionID, key: PoolKey, stream: any ByteStream, limits: ResponseParser.Limits, readSize: Int) {
        self.id = id
        self.key = key
        self.stream = stream
        self.parser = ResponseParser(limits: limits)
        self.readSize = readSize
    }

    /// Whether the connection carried a request before the current one.
    var wasReused: Bool { machine.completedRequestCount > 0 }

    // MARK: - Performing the machine's actions

    /// What an action leaves to the caller: a write to make (the send path), or a response event to hand over.
    private enum Effect {
        case none
        case writeHead(includingBody: Bool)
        case writeBody
        case event(ResponseEvent)
        case failed(HTTP1ConnectionStateMachine.RequestFailure)
    }

    /// Performs one action of the state machine: the only place its actions are acted on. The synchronous ones
    /// (closing, recording reuse, shaping the event to hand over) happen here; the writes are handed to the send
    /// path, the only async caller.
    @inline(never)
    private func perform(_ action: HTTP1ConnectionStateMachine.Action) -> Effect {
        switch action {
        case .writeRequestHead(let includingBody):
            return .writeHead(includingBody: includingBody)
        case .writeRequestBody:
            return .writeBody
        case .wait:
            return .none
        case .forwardResponseHead(let head):
            return .event(.head(head))
        case .forwardResponseBody(let bytes):
            return .event(.body(bytes))
        case .forwardResponseTrailers(let trailers):
            return .event(.trailers(trailers))
        case .succeedRequest(let disposition):
            reusable = disposition == .reuse
            return .event(.end(keepAlive: reusable))
        case .failRequest(let failure):
            reusable = false
            stream.close()
            return .failed(failure)
        case .closeConnection:
            reusable = false
            stream.close()
            return .none
        }
    }

    // MARK: - Sending

    /// Sends a request: the machine says what to write, in order (the head, with a body of at most 64 KiB in the
    /// same write; else the head, then the body in parts).
    nonisolated(nonsending) func send(
        head: HTTPRequestHead,
        hostHeader: String,
        body: HTTPRequest.Body,
        deadline: Deadline,
        idle: Duration
    ) async throws {
        var effect = begin(head: head, body: body)
        while true {
            switch effect {
            case .writeHead(let includingBody):
                try await writeHead(head, hostHeader: hostHeader, body: body, includingBody: includingBody, deadline: deadline, idle: idle)
                effect = perform(machine.requestHeadWritten())
            case .writeBody:
                try await writeBody(body, deadline: deadline, idle: idle)
                effect = perform(machine.requestBodyEnded())
            case .none:
                return
            case .event, .failed:
                preconditionFailure("the send path produced a response event")
            }
        }
    }

    /// Resets the per-request state and starts the machine's request.
    @inline(never)
    private func begin(head: HTTPRequestHead, body: HTTPRequest.Body) -> Effect {
        bytesSent = 0
        bytesReceived = 0
        firstByteAt = nil
        if parserPrimed { parser.expectResponse(to: head.method) } else {
            parser = ResponseParser(requestMethod: head.method, limits: parser.limits)
            parserPrimed = true
        }
        let writing: HTTP1ConnectionStateMachine.BodyWriting
        switch body {
        case .none: writing = .none
        case .bytes(let bytes) where bytes.count <= 64 * 1024: writing = .withHead
        case .bytes, .stream, .sizedStream: writing = .afterHead
        }
        let closeRequested = head.headers.contains("connection") && head.headers.tokens(for: "connection").contains("close")
        return perform(machine.startRequest(method: head.method, body: writing, closeRequested: closeRequested))
    }

    private static func framing(of body: HTTPRequest.Body) -> RequestBodyFraming {
        switch body {
        case .none: return .none
        case .bytes(let bytes): return .contentLength(bytes.count)
        case .stream: return .chunked
        case .sizedStream(let length, _): return .contentLength(length)
        }
    }

    /// Writes the head (and the whole body when `includingBody`, or the end of a body-less request) in one write,
    /// encoded in the buffer kept from the previous request: no allocation once it is warm.
    nonisolated(nonsending) private func writeHead(
        _ head: HTTPRequestHead, hostHeader: String, body: HTTPRequest.Body, includingBody: Bool,
        deadline: Deadline, idle: Duration
    ) async throws {
        let buffer = try encodeHead(head, hostHeader: hostHeader, body: body, includingBody: includingBody)
        do {
            try await stream.write(buffer, deadline: deadline, idle: idle)
        } catch {
            encoder.reset()
            recycle(consume buffer)
            throw error
        }
        bytesSent += Int64(buffer.count)
        recycle(consume buffer)
    }

    /// The head's bytes (with the body or the end of the message when it goes in the same write). A synchronous
    /// helper: an async function keeps each of its temporaries in a task allocation, a synchronous one on the stack.
    @inline(never)
    private func encodeHead(
        _ head: HTTPRequestHead, hostHeader: String, body: HTTPRequest.Body, includingBody: Bool
    ) throws -> [UInt8] {
        var buffer: [UInt8] = []
        swap(&buffer, &headBuffer)
        buffer.reserveCapacity(512)
        do {
            try encoder.writeHead(head, host: hostHeader, body: Self.framing(of: body), into: &buffer)
            if let observer { observer.sent(head: buffer) }
            if includingBody, case .bytes(let bytes) = body { try encoder.writeBodyPart(bytes, into: &buffer) }
            if case .none = body { try encoder.writeEnd(into: &buffer) }
            if includingBody { try encoder.writeEnd(into: &buffer) }
        } catch {
            encoder.reset()
            recycle(consume buffer)
            throw error
        }
        return buffer
    }

    /// Keeps a request buffer's storage for the next request (unless a large body made it large). The buffer is
    /// consumed: emptying a copy that is still referenced elsewhere would allocate a new one.
    private func recycle(_ buffer: consuming [UInt8]) {
        guard buffer.capacity <= 16 * 1024 else { return }
        buffer.removeAll(keepingCapacity: true)
        headBuffer = buffer
    }

    /// Writes a body that goes after the head: a large byte body, or a streamed one chunk by chunk.
    nonisolated(nonsending) private func writeBody(_ body: HTTPRequest.Body, deadline: Deadline, idle: Duration) async throws {
        do {
            switch body {
            case .none:
                preconditionFailure("a request without a body has no body to write")
            case .bytes(let bytes):
                var part: [UInt8] = []
                try encoder.writeBodyPart(bytes, into: &part)
                try encoder.writeEnd(into: &part)
                try await write(part, deadline: deadline, idle: idle)
            case .stream(let parts), .sizedStream(_, let parts):
                for try await chunk in parts {
                    var framed: [UInt8] = []
                    try encoder.writeBodyPart(chunk, into: &framed)
                    if !framed.isEmpty { try await write(framed, deadline: deadline, idle: idle) }
                }
                var end: [UInt8] = []
                try encoder.writeEnd(into: &end)
                try await write(end, deadline: deadline, idle: idle)
            }
        } catch {
            encoder.reset()
            throw error
        }
    }

    nonisolated(nonsending) private func write(_ bytes: [UInt8], deadline: Deadline, idle: Duration) async throws {
        try await stream.write(bytes, deadline: deadline, idle: idle)
        bytesSent += Int64(bytes.count)
    }

    // MARK: - Receiving

    /// The next response event, reading from the stream when the parser needs more bytes.
    /// `deadline` is the request's one absolute deadline, passed unchanged to the stream; `idle` bounds each read's
    /// wait (the channel under the stream ends it at whichever comes first).
    ///
    /// The parsing and bookkeeping live in synchronous helpers: an async function keeps each of its temporaries
    /// in a task allocation (about eight per call here when they were inline), a synchronous one on the stack.
    nonisolated(nonsending) func nextEvent(deadline: Deadline, idle: Duration) async throws -> ResponseEvent {
        while true {
            if let event = try takeEvent() { return event }
            let bytes = try await stream.read(maxBytes: readSize, deadline: deadline, idle: idle)
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
    /// the next ``nextEvent(deadline:idle:)`` ends the response, or, when the server closed the connection first,
    /// reports the truncated body. On an error `body` holds a partial body (the caller discards it).
    nonisolated(nonsending) func receiveBodyDirectly(into body: inout [UInt8], deadline: Deadline, idle: Duration) async throws {
        guard let remaining = parser.directBodyBytesRemaining else { return }
        var offset = body.count
        body.append(contentsOf: repeatElement(0, count: remaining))
        while offset < body.count {
            let count = try await stream.read(into: &body, at: offset, deadline: deadline, idle: idle)
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

    /// The next event the parser has from the bytes already received, told to the machine and performed.
    @inline(never)
    private func takeEvent() throws -> ResponseEvent? {
        guard let parsed = try parser.next() else { return nil }
        let action: HTTP1ConnectionStateMachine.Action
        switch parsed {
        case .head(let head): action = machine.responseHeadReceived(head)
        case .body(let bytes): action = machine.responseBodyReceived(bytes)
        case .trailers(let trailers): action = machine.responseTrailersReceived(trailers)
        case .end(let keepAlive): action = machine.responseEnded(keepAlive: keepAlive, unreadBytes: parser.bufferedByteCount)
        }
        guard case .event(let event) = perform(action) else { preconditionFailure("a parsed event produced no event") }
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
                firstByteAt = .now()
                _ = perform(machine.responseBytesReceived())
            }
            bytesReceived += Int64(bytes.count)
            parser.feed(bytes)
        }
    }

    /// After `.end`: whether the connection may carry another request (the machine's verdict).
    private(set) var reusable = false

    /// Records a failure of the current request; returns the machine's verdict (for the fresh-connection retry).
    /// The stream is closed (by the machine's action, or already).
    func fail(_ cause: HTTP1ConnectionStateMachine.FailureCause) -> HTTP1ConnectionStateMachine.RequestFailure? {
        if case .failed(let failure) = perform(machine.connectionFailed(cause)) { return failure }
        return nil
    }

    /// Gives the connection up (its response was not read to the end, or it is not wanted): it cannot be reused.
    func abandon() {
        _ = perform(machine.cancelRequest())
    }
}

/// The server closed the connection before sending any byte of the response.
struct ClosedBeforeResponse: Error {}
