package import CourierCore

/// The life of one HTTP/1.1 connection, as a pure state machine: the transport feeds it events (the head was
/// written, a response head was parsed, the peer closed, ...) and performs the ``Action`` each one returns. It
/// alone decides whether the connection may carry another request.
///
/// ```text
/// idle ─startRequest→ sendingHead ─requestHeadWritten→ sendingBody ─requestBodyEnded→ awaitingResponse
///                                 └────────(no separate body)────────────────────────┘
/// awaitingResponse ─responseHeadReceived→ receivingBody ─responseEnded→ idle (reuse) | closed
/// any request state ─connectionFailed / cancelRequest→ closed (the request fails)
/// idle ─cancelRequest (the owner gives the connection up)→ closed
/// ```
///
/// Requests are never pipelined, and the owner reads the response only once the whole request is written (a
/// server that answers an upload early is seen when the upload ends or fails). Events that cannot happen in the
/// current state are programming errors and trap (`preconditionFailure`).
package struct HTTP1ConnectionStateMachine: Sendable {
    /// What made a request fail.
    package enum FailureCause: Hashable, Sendable {
        /// The peer closed or reset the connection, or a write failed.
        case connectionClosed
        /// The response broke HTTP/1.1 framing (a ``ResponseParseError``).
        case protocolError
        /// A connect, read or total deadline passed.
        case timeout
        /// The request's task was cancelled.
        case cancelled
    }

    /// How a request failed, with what the transport needs to decide on a retry.
    package struct RequestFailure: Hashable, Sendable {
        package var cause: FailureCause
        package var method: HTTPMethod
        /// No byte of the response had arrived.
        package var beforeAnyResponseByte: Bool
        /// The connection had carried an earlier request (a kept-alive connection the server may have closed).
        package var connectionWasReused: Bool

        package init(cause: FailureCause, method: HTTPMethod, beforeAnyResponseByte: Bool, connectionWasReused: Bool) {
            self.cause = cause
            self.method = method
            self.beforeAnyResponseByte = beforeAnyResponseByte
            self.connectionWasReused = connectionWasReused
        }

        /// The classic keep-alive race: a reused connection closed before any response byte, for an idempotent
        /// method. The transport retries such a request once, on a fresh connection.
        package var shouldRetryOnFreshConnection: Bool {
            cause == .connectionClosed && beforeAnyResponseByte && connectionWasReused && method.isIdempotent
        }
    }

    /// What becomes of the connection when a request succeeds.
    package enum ConnectionDisposition: Hashable, Sendable {
        /// Return it to the pool: it may carry another request.
        case reuse
        /// Close it.
        case close
    }

    /// How the request body goes out.
    package enum BodyWriting: Hashable, Sendable {
        /// No body.
        case none
        /// A small body, written with the head in one write.
        case withHead
        /// A body written in parts after the head (streamed, or too large to copy into the head's buffer).
        case afterHead
    }

    /// What the owner must do after an event.
    package enum Action: Hashable, Sendable {
        /// Encode and write the request head, with the body when `includingBody`, then say
        /// ``HTTP1ConnectionStateMachine/requestHeadWritten()``.
        case writeRequestHead(includingBody: Bool)
        /// Write the request body, then say ``HTTP1ConnectionStateMachine/requestBodyEnded()``.
        case writeRequestBody
        /// Nothing to do until the next event (the request is out: read the response).
        case wait
        /// Hand the response head to the request.
        case forwardResponseHead(HTTPResponseHead)
        /// Hand response body bytes to the request.
        case forwardResponseBody(ArraySlice<UInt8>)
        /// Hand the response's trailer fields to the request.
        case forwardResponseTrailers(HTTPHeaders)
        /// The response is complete: finish the request, then reuse or close the connection.
        case succeedRequest(ConnectionDisposition)
        /// Fail the request and close the connection.
        case failRequest(RequestFailure)
        /// Close the connection; no request is in flight.
        case closeConnection
    }

    private struct Request: Sendable {
        var method: HTTPMethod
        var body: BodyWriting
        var reusedConnection: Bool
        /// The request said `Connection: close` (RFC 9112 §9.6): the server may close without saying so.
        var closeRequested: Bool
        var responseBytesSeen = false
    }

    private enum State: Sendable {
        case idle
        case sendingHead(Request)
        case sendingBody(Request)
        case awaitingResponse(Request)
        case receivingBody(Request)
        case closed
    }

    private var state: State = .idle
    private var completedRequests = 0

    /// A machine for a freshly connected connection.
    package init() {}

    /// Whether the connection can take a new request now.
    package var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Whether the connection is closed (or must be).
    package var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Requests this connection completed successfully.
    package var completedRequestCount: Int { completedRequests }

    // MARK: - Request side

    /// A request starts on this (idle) connection. `closeRequested`: the request says `Connection: close`.
    package mutating func startRequest(method: HTTPMethod, body: BodyWriting, closeRequested: Bool) -> Action {
        guard case .idle = state else { preconditionFailure("Invalid state for startRequest: \(state)") }
        state = .sendingHead(
            Request(method: method, body: body, reusedConnection: completedRequests > 0, closeRequested: closeRequested)
        )
        return .writeRequestHead(includingBody: body == .withHead)
    }

    /// The request head (and a body written with it) is out.
    package mutating func requestHeadWritten() -> Action {
        switch state {
        case .sendingHead(let request) where request.body == .afterHead:
            state = .sendingBody(request)
            return .writeRequestBody
        case .sendingHead(let request):
            state = .awaitingResponse(request)
            return .wait
        default:
            preconditionFailure("Invalid state for requestHeadWritten: \(state)")
        }
    }

    /// The last byte of a body written after the head is out.
    package mutating func requestBodyEnded() -> Action {
        guard case .sendingBody(let request) = state else { preconditionFailure("Invalid state for requestBodyEnded: \(state)") }
        state = .awaitingResponse(request)
        return .wait
    }

    // MARK: - Response side

    /// Bytes arrived from the server (before they are parsed).
    package mutating func responseBytesReceived() -> Action {
        switch state {
        case .awaitingResponse(var request):
            request.responseBytesSeen = true
            state = .awaitingResponse(request)
        case .receivingBody:
            break
        default:
            preconditionFailure("Invalid state for responseBytesReceived: \(state)")
        }
        return .wait
    }

    /// The parser reported the final response head.
    package mutating func responseHeadReceived(_ head: HTTPResponseHead) -> Action {
        guard case .awaitingResponse(var request) = state else {
            preconditionFailure("Invalid state for responseHeadReceived: \(state)")
        }
        request.responseBytesSeen = true
        state = .receivingBody(request)
        return .forwardResponseHead(head)
    }

    /// The parser reported response body bytes.
    package mutating func responseBodyReceived(_ bytes: ArraySlice<UInt8>) -> Action {
        guard case .receivingBody = state else { preconditionFailure("Invalid state for responseBodyReceived: \(state)") }
        return .forwardResponseBody(bytes)
    }

    /// The parser reported trailer fields.
    package mutating func responseTrailersReceived(_ trailers: HTTPHeaders) -> Action {
        guard case .receivingBody = state else {
            preconditionFailure("Invalid state for responseTrailersReceived: \(state)")
        }
        return .forwardResponseTrailers(trailers)
    }

    /// The parser reported the end of the response: `keepAlive` is what the response said about the connection,
    /// `unreadBytes` what the parser holds beyond it (bytes nobody asked for). The connection is reused only when
    /// the response keeps it alive, the request did not ask to close it, and nothing unsolicited followed.
    package mutating func responseEnded(keepAlive: Bool, unreadBytes: Int) -> Action {
        guard case .receivingBody(let request) = state else {
            preconditionFailure("Invalid state for responseEnded: \(state)")
        }
        completedRequests += 1
        if keepAlive && !request.closeRequested && unreadBytes == 0 {
            state = .idle
            return .succeedRequest(.reuse)
        }
        state = .closed
        return .succeedRequest(.close)
    }

    // MARK: - Failures

    /// The connection failed: the peer closed or reset it, a write failed, the response was malformed or a
    /// deadline passed. On an idle connection the connection is just closed.
    package mutating func connectionFailed(_ cause: FailureCause) -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeConnection
        case .sendingHead(let request), .sendingBody(let request), .awaitingResponse(let request),
            .receivingBody(let request):
            state = .closed
            return .failRequest(
                RequestFailure(
                    cause: cause,
                    method: request.method,
                    beforeAnyResponseByte: !request.responseBytesSeen,
                    connectionWasReused: request.reusedConnection
                )
            )
        case .closed:
            return .wait
        }
    }

    /// The owner gives the connection up: a request in flight fails as cancelled (a half-read response cannot be
    /// resynchronised), and an idle connection is closed.
    package mutating func cancelRequest() -> Action {
        connectionFailed(.cancelled)
    }
}
