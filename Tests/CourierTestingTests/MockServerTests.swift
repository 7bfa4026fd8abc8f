import CourierCore
import CourierHTTP1
import CourierPosix
import CourierTesting
import CourierTransport
import Testing

/// MockServer against Courier's own HTTP client, and a raw socket where the wire itself is what is checked.
@Suite(.timeLimit(.minutes(1))) struct MockServerTests {
    @Test func queuedResponsesAnswerInOrderOnOneKeptAliveConnection() async throws {
        try await withMockServer { server in
            try server.enqueue(.text("one"))
            try server.enqueue(.text("two", status: 201))
            let client = HTTPClient()
            defer { client.shutdown() }
            let first = try await client.execute(HTTPRequest(url: server.url("/a")))
            let second = try await client.execute(HTTPRequest(url: server.url("/b?q=1")))
            #expect(first.status == 200 && String(decoding: first.body, as: UTF8.self) == "one")
            #expect(second.status == 201 && String(decoding: second.body, as: UTF8.self) == "two")
            let requests = server.requests
            #expect(requests.map(\.target) == ["/a", "/b?q=1"])
            #expect(requests.map(\.query) == [nil, "q=1"])
            #expect(requests.map(\.connectionID) == [1, 1])
            #expect(requests.map(\.indexOnConnection) == [0, 1])
            #expect(requests[0].receivedAt <= requests[1].receivedAt)
            #expect(server.acceptedConnections == 1)
            #expect(server.pendingResponses == 0)
        }
    }

    @Test func aRouteAnswersItsMethodAndPathBeforeTheQueue() async throws {
        try await withMockServer { server in
            server.on(.get, "/items") { request in .json(#"{"path":"\#(request.path)"}"#) }
            try server.enqueue(.text("queued"))
            let client = HTTPClient()
            defer { client.shutdown() }
            let routed = try await client.execute(HTTPRequest(url: server.url("/items?page=2")))
            #expect(String(decoding: routed.body, as: UTF8.self) == #"{"path":"/items"}"#)
            #expect(routed.headers["content-type"] == "application/json")
            let queued = try await client.execute(HTTPRequest(method: .post, url: server.url("/items"), body: .bytes([1])))
            #expect(String(decoding: queued.body, as: UTF8.self) == "queued")
            let unscripted = try await client.execute(HTTPRequest(url: server.url("/nothing")))
            #expect(unscripted.status == 404)
            #expect(server.problems.count == 1)
            #expect(server.problems.first?.contains("/nothing") == true)
            #expect(server.requests.count == 3)
        }
    }

    @Test func requestBodiesAndHeadersAreRecordedAsSent() async throws {
        try await withMockServer { server in
            server.on(.post, "*") { _ in .status(204) }
            server.on(.put, "*") { _ in .status(204) }
            let client = HTTPClient()
            defer { client.shutdown() }
            let payload = (0..<5000).map { UInt8($0 % 251) }
            _ = try await client.execute(HTTPRequest(
                method: .post, url: server.url("/upload"), headers: ["X-Test": "yes"], body: .bytes(payload)
            ))
            let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
                continuation.yield(Array("streamed ".utf8))
                continuation.yield(Array("in chunks".utf8))
                continuation.finish()
            }
            _ = try await client.execute(HTTPRequest(method: .put, url: server.url("/stream"), body: .stream(stream)))
            let requests = server.requests
            #expect(requests.count == 2)
            #expect(requests.first?.body == payload)
            #expect(requests.first?.headers["x-test"] == "yes")
            #expect(requests.first?.headers["content-length"] == "5000")
            #expect(requests.last?.bodyText == "streamed in chunks")
            #expect(requests.last?.headers["transfer-encoding"] == "chunked")
        }
    }

    @Test func chunksArriveAsScriptedWithTheirPauses() async throws {
        try await withMockServer { server in
            try server.enqueue(.chunked(["alpha", "beta", "gamma"], delayBetweenChunks: .milliseconds(150)))
            let (_, arrivals) = try await RawClient.exchange(
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: server.port
            )
            let pieces = try RawClient.bodyPieces(arrivals)
            #expect(pieces.map { String(decoding: $0.bytes, as: UTF8.self) } == ["alpha", "beta", "gamma"])
            for (earlier, later) in zip(pieces, pieces.dropFirst()) {
                #expect((later.at - earlier.at) >= .milliseconds(100), "chunks \(later.at - earlier.at) apart")
            }
        }
    }

    @Test func theHeadWaitsForItsDelay() async throws {
        try await withMockServer { server in
            try server.enqueue(MockResponse(body: "late").delayed(by: .milliseconds(300)))
            let (sentAt, arrivals) = try await RawClient.exchange(
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: server.port
            )
            let first = try #require(arrivals.first)
            #expect(first.at - sentAt >= .milliseconds(250))
            #expect(try RawClient.bodyPieces(arrivals).flatMap(\.bytes) == Array("late".utf8))
        }
    }

    /// The server's pacing, loosely: 3000 bytes at 3000 bytes per second take about a second to arrive (the
    /// bound above is wide; the client's speed is not what is measured).
    @Test func aThrottledBodyArrivesAtAboutItsRate() async throws {
        try await withMockServer { server in
            let body = (0..<3000).map { UInt8($0 % 256) }
            try server.enqueue(MockResponse(body: body).throttled(bytesPerSecond: 3000))
            let (_, arrivals) = try await RawClient.exchange(
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: server.port
            )
            let pieces = try RawClient.bodyPieces(arrivals)
            #expect(pieces.flatMap(\.bytes) == body)
            #expect(pieces.count >= 10, "the body came in \(pieces.count) pieces")
            let spread = try #require(pieces.last).at - (try #require(pieces.first)).at
            #expect(spread >= .milliseconds(600) && spread <= .seconds(6), "3000 bytes at 3000/s took \(spread)")
        }
    }

    @Test func aCutBodyLeavesTheClientWithExactlyThoseBytes() async throws {
        try await withMockServer { server in
            let body = [UInt8](repeating: 42, count: 1000)
            try server.enqueue(MockResponse(body: body).disconnecting(afterBodyBytes: 300))
            try server.enqueue(MockResponse(body: body).disconnecting(afterBodyBytes: 300))
            let client = HTTPClient()
            defer { client.shutdown() }
            let streaming = try await client.stream(HTTPRequest(url: server.url("/cut"), decompress: false))
            var received: [UInt8] = []
            var failure: CourierError?
            do {
                for try await piece in streaming.body { received += piece }
            } catch {
                failure = error as? CourierError
            }
            #expect(received.count == 300)
            #expect(failure != nil, "the cut body ended without an error")
            await #expect(throws: CourierError.self) { _ = try await client.execute(HTTPRequest(url: server.url("/cut"))) }
            #expect(server.requests.map(\.connectionID) == [1, 2], "a cut connection is not reused")
        }
    }

    @Test func aSmugglingAttemptGets400AndTheConnectionCloses() async throws {
        try await withMockServer { server in
            server.on(.get, "*") { _ in .text("should not be answered") }
            let (_, arrivals) = try await RawClient.exchange(
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                    + "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
                port: server.port
            )
            let text = String(decoding: arrivals.flatMap(\.bytes), as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 400 "))
            #expect(!text.contains("should not be answered"), "the smuggled request was answered: \(text)")
            #expect(text.contains("Connection: close"))
            #expect(server.requests.isEmpty)
            #expect(server.problems.count == 1)
        }
    }

    @Test func hugeHeadersGet431() async throws {
        try await withMockServer { server in
            let big = String(repeating: "a", count: 20 * 1024)
            let (_, arrivals) = try await RawClient.exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n", port: server.port)
            #expect(String(decoding: arrivals.flatMap(\.bytes), as: UTF8.self).hasPrefix("HTTP/1.1 431 "))
        }
    }

    @Test func shutdownStopsAResponseInProgressAndClosesTheListener() async throws {
        let server = try MockServer()
        try server.enqueue(MockResponse(body: "never").delayed(by: .seconds(20)))
        let client = HTTPClient()
        defer { client.shutdown() }
        let url = try server.url("/slow")
        let pending = Task { try await client.execute(HTTPRequest(url: url)) }
        for _ in 0..<200 where server.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.requests.count == 1)
        let start = ContinuousClock.now
        await server.shutdown()
        #expect(ContinuousClock.now - start < .seconds(10), "shutdown waited for the script")
        await #expect(throws: (any Error).self) { _ = try await pending.value }
        await #expect(throws: (any Error).self) {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(2), on: EventLoopGroup.shared.next()).close()
        }
        await server.shutdown()  // again: nothing happens
    }

    @Test func conveniencesCarryTheirStatusAndFields() async throws {
        try await withMockServer { server in
            try server.enqueue(.serviceUnavailable(retryAfter: 7))
            try server.enqueue(.tooManyRequests(retryAfter: 3))
            try server.enqueue(.unauthorized())
            try server.enqueue(MockResponse(status: 202, headers: ["X-Custom": "v"], body: "accepted").adding(header: "X-More", "w"))
            let client = HTTPClient()
            defer { client.shutdown() }
            var answers: [(Int, String?)] = []
            for header in ["retry-after", "retry-after", "www-authenticate", "x-custom"] {
                let response = try await client.execute(HTTPRequest(url: server.url("/c")))
                answers.append((response.status, response.headers[header]))
                if response.status == 202 {
                    #expect(response.headers["x-more"] == "w")
                    #expect(String(decoding: response.body, as: UTF8.self) == "accepted")
                }
            }
            #expect(answers.map(\.0) == [503, 429, 401, 202])
            #expect(answers.map(\.1) == ["7", "3", #"Bearer realm="mock""#, "v"])
        }
    }

    @Test func aClosingResponseEndsItsConnectionAndHeadGetsNoBody() async throws {
        try await withMockServer { server in
            try server.enqueue(MockResponse(body: "first").closingConnection())
            try server.enqueue(MockResponse(body: "not sent to HEAD"))
            try server.enqueue(.text("after head"))
            let client = HTTPClient()
            defer { client.shutdown() }
            let first = try await client.execute(HTTPRequest(url: server.url("/1")))
            #expect(first.headers["connection"] == "close")
            let head = try await client.execute(HTTPRequest(method: .head, url: server.url("/2")))
            #expect(head.body.isEmpty)
            #expect(head.headers["content-length"] == "16")
            let third = try await client.execute(HTTPRequest(url: server.url("/3")))
            #expect(String(decoding: third.body, as: UTF8.self) == "after head")
            // The closed connection is not reused; the HEAD's is, since no body followed its head.
            #expect(server.requests.map(\.connectionID) == [1, 2, 2])
        }
    }

    @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() async throws {
        var configuration = MockServer.Configuration()
        configuration.idleTimeout = .milliseconds(100)
        try await withMockServer(configuration: configuration) { server in
            server.on(.get, "*") { _ in .text("ok") }
            let (_, arrivals) = try await RawClient.exchange("GET / HTTP/1.1\r\nHost: x\r\n\r\n", port: server.port)
            // The raw client reads until the server closes: the response, then the end after the idle timeout.
            #expect(String(decoding: arrivals.flatMap(\.bytes), as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(server.requests.count == 1)
        }
    }

    @Test func aPathThatMakesNoURLIsATypedError() async throws {
        try await withMockServer { server in
            #expect(throws: MockServerError.self) { _ = try server.url("no-slash") }
            let url = try server.url("/x")
            #expect(url.requestTarget == "/x")
        }
    }
}
