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
    func send(
        head: HTTPRequestHead,
        hostHeader: String,
        body: HTTPRequest.Body,
        timeout: () throws -> Duration
    ) async throws {
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
        // The head is built in a buffer kept from the previous request (no allocation once it is warm).
        var buffer: [UInt8] = []
        swap(&buffer, &headBuffer)
        defer {
            if buffer.capacity <= 16 * 1024 {
                buffer.removeAll(keepingCapacity: true)
                swap(&buffer, &headBuffer)
            }
        }
        buffer.reserveCapacity(512)
        try encoder.writeHead(head, host: hostHeader, body: framing, into: &buffer)
        do {
            switch body {
            case .none:
                try encoder.writeEnd(into: &buffer)
                try await write(buffer, timeout: timeout())
                _ = machine.requestHeadWritten()
            case .bytes(let bytes):
                if bytes.count <= 64 * 1024 {
                    try encoder.writeBodyPart(bytes, into: &buffer)
                    try encoder.writeEnd(into: &buffer)
                    try await write(buffer, timeout: timeout())
                    _ = machine.requestHeadWritten()
                } else {
                    try await write(buffer, timeout: timeout())
                    _ = machine.requestHeadWritten()
                    var part: [UInt8] = []
                    try encoder.writeBodyPart(bytes, into: &part)
                    try encoder.writeEnd(into: &part)
                    try await write(part, timeout: timeout())
                }
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

    private func write(_ bytes: [UInt8], timeout: Duration) async throws {
        try await stream.write(bytes, timeout: timeout)
        bytesSent += Int64(bytes.count)
    }

    // MARK: - Receiving

    /// The next response event, reading from the stream when the parser needs more bytes.
    /// `timeout` is asked before each read (it shrinks as the request's total deadline nears).
    func nextEvent(timeout: () throws -> Duration) async throws -> ResponseEvent {
        while true {
            if let event = try parser.next() {
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
            let bytes = try await stream.read(maxBytes: readSize, timeout: timeout())
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
