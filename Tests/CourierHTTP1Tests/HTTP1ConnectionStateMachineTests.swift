import CourierCore
import CourierHTTP1
import Testing

@Suite struct HTTP1ConnectionStateMachineTests {
    typealias Failure = HTTP1ConnectionStateMachine.RequestFailure
    let ok = HTTPResponseHead(status: 200, reason: "OK", headers: ["Content-Length": "2"])

    @Test func getThenReuseThenClose() {
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.isIdle)
        #expect(sm.startRequest(method: .get, body: .none, closeRequested: false) == .writeRequestHead(includingBody: false))
        #expect(sm.requestHeadWritten() == .wait)
        #expect(sm.responseBytesReceived() == .wait)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok))
        #expect(sm.responseBodyReceived([1, 2]) == .forwardResponseBody([1, 2]))
        #expect(sm.responseEnded(keepAlive: true, unreadBytes: 0) == .succeedRequest(.reuse))
        #expect(sm.isIdle)
        // Second request on the same connection; the server says Connection: close.
        #expect(sm.startRequest(method: .get, body: .none, closeRequested: false) == .writeRequestHead(includingBody: false))
        #expect(sm.requestHeadWritten() == .wait)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok))
        #expect(sm.responseEnded(keepAlive: false, unreadBytes: 0) == .succeedRequest(.close))
        #expect(sm.isClosed)
        #expect(sm.completedRequestCount == 2)
    }

    @Test func aSmallBodyGoesWithTheHeadALargeOneAfterIt() {
        var small = HTTP1ConnectionStateMachine()
        #expect(small.startRequest(method: .post, body: .withHead, closeRequested: false) == .writeRequestHead(includingBody: true))
        #expect(small.requestHeadWritten() == .wait)
        var large = HTTP1ConnectionStateMachine()
        #expect(large.startRequest(method: .post, body: .afterHead, closeRequested: false) == .writeRequestHead(includingBody: false))
        #expect(large.requestHeadWritten() == .writeRequestBody)
        #expect(large.requestBodyEnded() == .wait)
        #expect(large.responseHeadReceived(ok) == .forwardResponseHead(ok))
        #expect(large.responseTrailersReceived(["T": "1"]) == .forwardResponseTrailers(["T": "1"]))
        #expect(large.responseEnded(keepAlive: true, unreadBytes: 0) == .succeedRequest(.reuse))
    }

    @Test func theMachineAloneDecidesReuse() {
        func ending(closeRequested: Bool, keepAlive: Bool, unread: Int) -> HTTP1ConnectionStateMachine.Action {
            var sm = HTTP1ConnectionStateMachine()
            _ = sm.startRequest(method: .get, body: .none, closeRequested: closeRequested)
            _ = sm.requestHeadWritten()
            _ = sm.responseHeadReceived(ok)
            return sm.responseEnded(keepAlive: keepAlive, unreadBytes: unread)
        }
        #expect(ending(closeRequested: false, keepAlive: true, unread: 0) == .succeedRequest(.reuse))
        // The request said Connection: close: the server may close without saying so (RFC 9112 §9.6).
        #expect(ending(closeRequested: true, keepAlive: true, unread: 0) == .succeedRequest(.close))
        // Bytes after the response that nobody asked for: the connection cannot be trusted.
        #expect(ending(closeRequested: false, keepAlive: true, unread: 3) == .succeedRequest(.close))
        #expect(ending(closeRequested: false, keepAlive: false, unread: 0) == .succeedRequest(.close))
    }

    @Test func reusedConnectionClosedBeforeAnyResponseByteIsRetryable() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        _ = sm.requestHeadWritten()
        _ = sm.responseHeadReceived(ok)
        _ = sm.responseEnded(keepAlive: true, unreadBytes: 0)
        // The server closed the idle connection just as the next request was written.
        #expect(sm.startRequest(method: .get, body: .none, closeRequested: false) == .writeRequestHead(includingBody: false))
        #expect(sm.requestHeadWritten() == .wait)
        let action = sm.connectionFailed(.connectionClosed)
        let failure = Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: true, connectionWasReused: true)
        #expect(action == .failRequest(failure))
        #expect(failure.shouldRetryOnFreshConnection)
        #expect(sm.isClosed)
    }

    @Test func retryRules() {
        func failure(_ cause: HTTP1ConnectionStateMachine.FailureCause, _ method: HTTPMethod, byte: Bool, reused: Bool) -> Failure {
            Failure(cause: cause, method: method, beforeAnyResponseByte: !byte, connectionWasReused: reused)
        }
        #expect(failure(.connectionClosed, .put, byte: false, reused: true).shouldRetryOnFreshConnection)
        #expect(!failure(.connectionClosed, .post, byte: false, reused: true).shouldRetryOnFreshConnection)
        #expect(!failure(.connectionClosed, .get, byte: true, reused: true).shouldRetryOnFreshConnection)
        #expect(!failure(.connectionClosed, .get, byte: false, reused: false).shouldRetryOnFreshConnection)
        #expect(!failure(.timeout, .get, byte: false, reused: true).shouldRetryOnFreshConnection)
        #expect(!failure(.cancelled, .get, byte: false, reused: true).shouldRetryOnFreshConnection)
    }

    @Test func failureAfterResponseBytesIsNotRetryable() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        _ = sm.requestHeadWritten()
        #expect(sm.responseBytesReceived() == .wait)  // half a status line arrived
        #expect(
            sm.connectionFailed(.connectionClosed)
                == .failRequest(Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: false, connectionWasReused: false))
        )
    }

    @Test func firstRequestOnAFreshConnectionIsNotReused() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        #expect(
            sm.connectionFailed(.connectionClosed)
                == .failRequest(Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: true, connectionWasReused: false))
        )
    }

    @Test func protocolErrorMidBody() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        _ = sm.requestHeadWritten()
        _ = sm.responseHeadReceived(ok)
        #expect(sm.responseBodyReceived([1]) == .forwardResponseBody([1]))
        #expect(
            sm.connectionFailed(.protocolError)
                == .failRequest(Failure(cause: .protocolError, method: .get, beforeAnyResponseByte: false, connectionWasReused: false))
        )
        #expect(sm.connectionFailed(.connectionClosed) == .wait)  // already closed
    }

    @Test func cancellation() {
        var idle = HTTP1ConnectionStateMachine()
        #expect(idle.cancelRequest() == .closeConnection)  // nothing in flight: the connection is given up
        #expect(idle.isClosed)
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        _ = sm.requestHeadWritten()
        _ = sm.responseHeadReceived(ok)
        #expect(
            sm.cancelRequest()
                == .failRequest(Failure(cause: .cancelled, method: .get, beforeAnyResponseByte: false, connectionWasReused: false))
        )
        #expect(sm.isClosed)
        #expect(sm.cancelRequest() == .wait)
    }

    @Test func idleConnectionEvents() {
        var closedByServer = HTTP1ConnectionStateMachine()
        #expect(closedByServer.connectionFailed(.connectionClosed) == .closeConnection)
        #expect(closedByServer.isClosed)
    }
}

/// Illegal event orders are programming errors in the transport: they trap instead of corrupting the connection.
@Suite struct HTTP1ConnectionStateMachineMisuseTests {
    @Test func startingASecondRequestWhileOneIsInFlightTraps() async {
        await #expect(processExitsWith: .failure) {
            var sm = HTTP1ConnectionStateMachine()
            _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
            _ = sm.startRequest(method: .get, body: .none, closeRequested: false)
        }
    }

    @Test func aResponseBeforeTheRequestIsWrittenTraps() async {
        // The owner reads only once the whole request is out.
        await #expect(processExitsWith: .failure) {
            var sm = HTTP1ConnectionStateMachine()
            _ = sm.startRequest(method: .put, body: .afterHead, closeRequested: false)
            _ = sm.requestHeadWritten()
            _ = sm.responseHeadReceived(HTTPResponseHead(status: 413))
        }
    }

    @Test func responseHeadWithoutARequestTraps() async {
        await #expect(processExitsWith: .failure) {
            var sm = HTTP1ConnectionStateMachine()
            _ = sm.responseHeadReceived(HTTPResponseHead(status: 200))
        }
    }

    @Test func parserReuseAfterCloseTraps() async {
        await #expect(processExitsWith: .failure) {
            var parser = ResponseParser()
            _ = try? parser.parse(Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8))
            parser.expectResponse(to: .get)
        }
    }
}
