import CourierCore

/// The life of one HTTP/1.1 connection, as a pure state machine: the transport feeds it events (bytes were
/// written, a response head was parsed, the peer closed, ...) and performs the ``Action`` each one returns.
///
/// ```text
/// idle ─startRequest→ requestStarted ─requestHeadWritten→ streamingBody ─requestBodyEnded→ awaitingResponse
///                                   └──────────(no body)──────────────────────────────────┘
/// awaitingResponse ─responseHeadReceived→ receivingBody ─responseEnded→ idle (keep-alive) | closed
/// any request state ─connectionFailed / cancel→ closed (the request fails)
/// ```
///
/// A response head may arrive before the request body is complete (a server refusing an upload early): the
/// head is forwarded with `stopRequestBody: true` and the connection is closed after that response.
/// Requests are never pipelined. Events that cannot happen in the current state are programming errors and
/// trap (`preconditionFailure`); completions of writes that were in flight when the connection failed are
/// tolerated.
public struct HTTP1ConnectionStateMachine: Sendable {
    /// What made a request fail.
    public enum FailureCause: Hashable, Sendable {
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
    public struct RequestFailure: Hashable, Sendable {
        public var cause: FailureCause
        public var method: HTTPMethod
        /// No byte of the response had arrived.
        public var beforeAnyResponseByte: Bool
        /// The connection had carried an earlier request (a kept-alive connection the server may have closed).
        public var connectionWasReused: Bool

        public init(cause: FailureCause, method: HTTPMethod, beforeAnyResponseByte: Bool, connectionWasReused: Bool) {
            self.cause = cause
            self.method = method
            self.beforeAnyResponseByte = beforeAnyResponseByte
            self.connectionWasReused = connectionWasReused
        }

        /// The classic keep-alive race: a reused connection closed before any response byte, for an idempotent
        /// method. The transport retries such a request once, on a fresh connection.
        public var shouldRetryOnFreshConnection: Bool {
            cause == .connectionClosed && beforeAnyResponseByte && connectionWasReused && method.isIdempotent
        }
    }

    /// What becomes of the connection when a request succeeds.
    public enum ConnectionDisposition: Hashable, Sendable {
        /// Return it to the pool: it may carry another request.
        case reuse
        /// Close it.
        case close
    }

    /// What the owner must do after an event.
    public enum Action: Hashable, Sendable {
        /// Encode and write the request head.
        case writeRequestHead
        /// Start writing the request body.
        case startRequestBody
        /// Nothing to do until the next event.
        case wait
        /// Hand the response head to the request. When `stopRequestBody` is true the server answered before the
        /// request body was complete: stop writing it (the connection is closed once the response ends).
        case forwardResponseHead(HTTPResponseHead, stopRequestBody: Bool)
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
        var hasBody: Bool
        var reusedConnection: Bool
        var requestComplete = false
        var responseBytesSeen = false
        var headWritten = false
    }

    private enum State: Sendable {
        case idle
        case requestStarted(Request)
        case streamingBody(Request)
        case awaitingResponse(Request)
        case receivingBody(Request)
        case closed
    }

    private var state: State = .idle
    private var completedRequests = 0

    /// A machine for a freshly connected connection.
    public init() {}

    /// Whether the connection can take a new request now.
    public var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Whether the connection is closed (or must be).
    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Requests this connection completed successfully.
    public var completedRequestCount: Int { completedRequests }

    // MARK: - Request side

    /// A request starts on this (idle) connection.
    public mutating func startRequest(method: HTTPMethod, hasBody: Bool) -> Action {
        guard case .idle = state else { preconditionFailure("Invalid state for startRequest: \(state)") }
        state = .requestStarted(Request(method: method, hasBody: hasBody, reusedConnection: completedRequests > 0))
        return .writeRequestHead
    }

    /// The request head is written.
    public mutating func requestHeadWritten() -> Action {
        switch state {
        case .requestStarted(var request):
            request.headWritten = true
            if request.hasBody {
                state = .streamingBody(request)
                return .startRequestBody
            }
            request.requestComplete = true
            state = .awaitingResponse(request)
            return .wait
        case .receivingBody(var request) where !request.headWritten:
            // The response started before the head write completed: do not start the body.
            request.headWritten = true
            request.requestComplete = !request.hasBody
            state = .receivingBody(request)
            return .wait
        case .closed:
            return .wait
        default:
            preconditionFailure("Invalid state for requestHeadWritten: \(state)")
        }
    }

    /// The last byte of the request body is written.
    public mutating func requestBodyEnded() -> Action {
        switch state {
        case .streamingBody(var request):
            request.requestComplete = true
            state = .awaitingResponse(request)
            return .wait
        case .receivingBody(var request) where !request.requestComplete:
            request.requestComplete = true
            state = .receivingBody(request)
            return .wait
        case .closed:
            return .wait
        default:
            preconditionFailure("Invalid state for requestBodyEnded: \(state)")
        }
    }

    // MARK: - Response side

    /// Bytes arrived from the server (before they are parsed). Bytes while idle were not asked for: the
    /// connection cannot be trusted any more and is closed.
    public mutating func responseBytesReceived() -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeConnection
        case .requestStarted(var request):
            request.responseBytesSeen = true
            state = .requestStarted(request)
        case .streamingBody(var request):
            request.responseBytesSeen = true
            state = .streamingBody(request)
        case .awaitingResponse(var request):
            request.responseBytesSeen = true
            state = .awaitingResponse(request)
        case .receivingBody, .closed:
            break
        }
        return .wait
    }

    /// The parser reported the final response head.
    public mutating func responseHeadReceived(_ head: HTTPResponseHead) -> Action {
        switch state {
        case .requestStarted(var request), .streamingBody(var request):
            request.responseBytesSeen = true
            state = .receivingBody(request)
            return .forwardResponseHead(head, stopRequestBody: true)
        case .awaitingResponse(var request):
            request.responseBytesSeen = true
            state = .receivingBody(request)
            return .forwardResponseHead(head, stopRequestBody: false)
        default:
            preconditionFailure("Invalid state for responseHeadReceived: \(state)")
        }
    }

    /// The parser reported response body bytes.
    public mutating func responseBodyReceived(_ bytes: ArraySlice<UInt8>) -> Action {
        guard case .receivingBody = state else { preconditionFailure("Invalid state for responseBodyReceived: \(state)") }
        return .forwardResponseBody(bytes)
    }

    /// The parser reported trailer fields.
    public mutating func responseTrailersReceived(_ trailers: HTTPHeaders) -> Action {
        guard case .receivingBody = state else {
            preconditionFailure("Invalid state for responseTrailersReceived: \(state)")
        }
        return .forwardResponseTrailers(trailers)
    }

    /// The parser reported the end of the response; `keepAlive` is what it said about the connection.
    public mutating func responseEnded(keepAlive: Bool) -> Action {
        guard case .receivingBody(let request) = state else {
            preconditionFailure("Invalid state for responseEnded: \(state)")
        }
        completedRequests += 1
        if keepAlive && request.requestComplete {
            state = .idle
            return .succeedRequest(.reuse)
        }
        state = .closed
        return .succeedRequest(.close)
    }

    // MARK: - Failures

    /// The connection failed: the peer closed or reset it, a write failed, the response was malformed or a
    /// deadline passed. On an idle connection (a server closing a kept-alive connection, an idle timeout) the
    /// connection is just closed.
    public mutating func connectionFailed(_ cause: FailureCause) -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeConnection
        case .requestStarted(let request), .streamingBody(let request), .awaitingResponse(let request),
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

    /// The request's task was cancelled: the request fails and the connection is closed (a half-read response
    /// cannot be resynchronised). Cancelling when no request is in flight does nothing.
    public mutating func cancelRequest() -> Action {
        switch state {
        case .idle, .closed:
            return .wait
        default:
            return connectionFailed(.cancelled)
        }
    }

    /// The owner is closing an idle connection (idle timeout, pool shrinking, shutdown).
    public mutating func closeIdleConnection() -> Action {
        guard case .idle = state else { preconditionFailure("Invalid state for closeIdleConnection: \(state)") }
        state = .closed
        return .closeConnection
    }
}
