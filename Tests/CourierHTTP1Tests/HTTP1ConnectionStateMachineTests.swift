import CourierCore
import CourierHTTP1
import Testing

@Suite struct HTTP1ConnectionStateMachineTests {
    typealias Failure = HTTP1ConnectionStateMachine.RequestFailure
    let ok = HTTPResponseHead(status: 200, reason: "OK", headers: ["Content-Length": "2"])

    @Test func getThenReuseThenClose() {
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.isIdle)
        #expect(sm.startRequest(method: .get, hasBody: false) == .writeRequestHead)
        #expect(sm.requestHeadWritten() == .wait)
        #expect(sm.responseBytesReceived() == .wait)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok, stopRequestBody: false))
        #expect(sm.responseBodyReceived([1, 2]) == .forwardResponseBody([1, 2]))
        #expect(sm.responseEnded(keepAlive: true) == .succeedRequest(.reuse))
        #expect(sm.isIdle)
        // Second request on the same connection; the server says Connection: close.
        #expect(sm.startRequest(method: .get, hasBody: false) == .writeRequestHead)
        #expect(sm.requestHeadWritten() == .wait)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok, stopRequestBody: false))
        #expect(sm.responseEnded(keepAlive: false) == .succeedRequest(.close))
        #expect(sm.isClosed)
        #expect(sm.completedRequestCount == 2)
    }

    @Test func streamedUpload() {
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.startRequest(method: .post, hasBody: true) == .writeRequestHead)
        #expect(sm.requestHeadWritten() == .startRequestBody)
        #expect(sm.requestBodyEnded() == .wait)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok, stopRequestBody: false))
        #expect(sm.responseTrailersReceived(["T": "1"]) == .forwardResponseTrailers(["T": "1"]))
        #expect(sm.responseEnded(keepAlive: true) == .succeedRequest(.reuse))
    }

    @Test func earlyResponseStopsTheUploadAndClosesTheConnection() {
        let tooLarge = HTTPResponseHead(status: 413, reason: "Payload Too Large")
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.startRequest(method: .put, hasBody: true) == .writeRequestHead)
        #expect(sm.requestHeadWritten() == .startRequestBody)
        // The server refuses while the body is still being written.
        #expect(sm.responseHeadReceived(tooLarge) == .forwardResponseHead(tooLarge, stopRequestBody: true))
        #expect(sm.responseEnded(keepAlive: true) == .succeedRequest(.close))  // the body was cut: no reuse
        #expect(sm.isClosed)
    }

    @Test func responseBeforeTheHeadWriteCompleted() {
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.startRequest(method: .post, hasBody: true) == .writeRequestHead)
        #expect(sm.responseHeadReceived(ok) == .forwardResponseHead(ok, stopRequestBody: true))
        #expect(sm.requestHeadWritten() == .wait)  // the body is not started
        #expect(sm.responseEnded(keepAlive: true) == .succeedRequest(.close))
    }

    @Test func reusedConnectionClosedBeforeAnyResponseByteIsRetryable() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, hasBody: false)
        _ = sm.requestHeadWritten()
        _ = sm.responseHeadReceived(ok)
        _ = sm.responseEnded(keepAlive: true)
        // The server closed the idle connection just as the next request was written.
        #expect(sm.startRequest(method: .get, hasBody: false) == .writeRequestHead)
        #expect(sm.requestHeadWritten() == .wait)
        let action = sm.connectionFailed(.connectionClosed)
        let failure = Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: true, connectionWasReused: true)
        #expect(action == .failRequest(failure))
        #expect(failure.shouldRetryOnFreshConnection)
        #expect(sm.isClosed)
        // A late write completion after the failure is tolerated.
        #expect(sm.requestHeadWritten() == .wait)
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
        _ = sm.startRequest(method: .get, hasBody: false)
        _ = sm.requestHeadWritten()
        #expect(sm.responseBytesReceived() == .wait)  // half a status line arrived
        #expect(
            sm.connectionFailed(.connectionClosed)
                == .failRequest(Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: false, connectionWasReused: false))
        )
    }

    @Test func firstRequestOnAFreshConnectionIsNotReused() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, hasBody: false)
        #expect(
            sm.connectionFailed(.connectionClosed)
                == .failRequest(Failure(cause: .connectionClosed, method: .get, beforeAnyResponseByte: true, connectionWasReused: false))
        )
    }

    @Test func protocolErrorMidBody() {
        var sm = HTTP1ConnectionStateMachine()
        _ = sm.startRequest(method: .get, hasBody: false)
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
        var sm = HTTP1ConnectionStateMachine()
        #expect(sm.cancelRequest() == .wait)  // nothing in flight
        _ = sm.startRequest(method: .get, hasBody: false)
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
        var unsolicited = HTTP1ConnectionStateMachine()
        #expect(unsolicited.responseBytesReceived() == .closeConnection)  // bytes nobody asked for
        #expect(unsolicited.isClosed)
        var idleTimeout = HTTP1ConnectionStateMachine()
        #expect(idleTimeout.closeIdleConnection() == .closeConnection)
        #expect(idleTimeout.isClosed)
    }
}

/// Illegal event orders are programming errors in the transport: they trap instead of corrupting the connection.
@Suite struct HTTP1ConnectionStateMachineMisuseTests {
    @Test func startingASecondRequestWhileOneIsInFlightTraps() async {
        await #expect(processExitsWith: .failure) {
            var sm = HTTP1ConnectionStateMachine()
            _ = sm.startRequest(method: .get, hasBody: false)
            _ = sm.startRequest(method: .get, hasBody: false)
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
