import CourierCore
import CourierHTTP1
import CourierPosix
import CourierTestSupport
import CourierTransport
import Foundation
import Synchronization
import Testing

/// Byte i of the peer's bodies is i % 251.
func pattern(_ n: Int) -> [UInt8] { (0..<n).map { UInt8($0 % 251) } }

func url(_ s: String) -> HTTPURL { HTTPURL(s)! }

/// Records an issue unless `body` throws a ``CourierError`` of `kind`.
func expectKind(_ kind: CourierError.Kind, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(kind)")
    } catch let error as CourierError {
        #expect(error.kind == kind, "\(error)")
    } catch {
        Issue.record("unexpected \(error)")
    }
}

/// Expects a request to `server` with a 300 ms idle timeout to fail with `timeout`, no sooner than the idle
/// timeout (the upper bound only catches a hang).
func expectIdleTimeout(from server: ScriptedServer) async {
    let client = HTTPClient()
    defer { client.shutdown() }
    let started = ContinuousClock.now
    await expectKind(.timeout) {
        _ = try await client.execute(HTTPRequest(
            url: url(server.url("/")), timeouts: TimeoutPolicy(connect: .seconds(2), idle: .milliseconds(300), total: .seconds(10))
        ))
    }
    let took = ContinuousClock.now - started
    #expect(took >= .milliseconds(250) && took < .seconds(10))
}

func json(_ bytes: [UInt8]) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
}

@Suite(.timeLimit(.minutes(1))) struct HTTPClientAgainstPythonTests {
    @Test func contentLengthBodyAndKeepAliveReuse() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let first = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/100"))))
        #expect(first.status == 200)
        #expect(first.body == pattern(100))
        #expect(first.metrics.reusedConnection == false)
        #expect(first.metrics.connect != nil)
        #expect(first.metrics.bytesSent > 40)
        #expect(first.metrics.bytesReceived > 100)
        let second = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/5000"))))
        #expect(second.body == pattern(5000))
        #expect(second.metrics.reusedConnection)
        #expect(second.metrics.connect == nil)
        let count = try await client.execute(HTTPRequest(url: url(peer.url("/connections"))))
        #expect(try json(count.body)["accepted"] as? Int == 1)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let response = try await client.execute(HTTPRequest(url: url(peer.url("/chunked/100000?size=777"))))
        #expect(response.body == pattern(100_000))
        #expect(response.trailers["x-checksum"]?.count == 64)
    }

    @Test(arguments: ["gzip", "deflate"]) func decodesCompressedBodies(_ coding: String) async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let response = try await client.execute(HTTPRequest(url: url(peer.url("/\(coding)/300000"))))
        #expect(response.headers["content-encoding"] == coding)
        #expect(response.body == pattern(300_000))
        // Wire bytes are the compressed size, far below the decoded size.
        #expect(response.metrics.bytesReceived < 100_000)
        let echo = try await client.execute(HTTPRequest(url: url(peer.url("/echo"))))
        let headers = try json(echo.body)["headers"] as! [[String]]
        #expect(headers.contains(["Accept-Encoding", "gzip, deflate"]))
    }

    @Test func decodedSizeIsLimited() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maxDecodedBytes = 10_000
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        do {
            _ = try await client.execute(HTTPRequest(url: url(peer.url("/gzip/300000"))))
            Issue.record("expected body-too-large")
        } catch {
            #expect(error.kind == .bodyTooLarge)
        }
    }

    @Test func aBodyOverTheLimitFailsAndItsConnectionIsNotReused() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maxBodyBytes = 1000
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        do {
            _ = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/5000"))))
            Issue.record("expected body-too-large")
        } catch {
            #expect(error.kind == .bodyTooLarge)
            #expect(error.bytesSent > 40)
            #expect(error.bytesReceived > 1000)
        }
        // The half-read connection was closed: the next request gets a fresh one and its whole body.
        let next = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/1000"))))
        #expect(next.body == pattern(1000))
        #expect(next.metrics.reusedConnection == false)
        #expect(client.openConnectionCount == 1)
    }

    @Test func redirectsAreFollowedUpToTheLimit() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let ok = try await client.execute(HTTPRequest(url: url(peer.url("/redirect/3"))))
        #expect(ok.status == 200)
        #expect(ok.body == Array("done".utf8))
        #expect(ok.metrics.redirects == 3)
        #expect(ok.url.path == "/redirect/0")
        do {
            _ = try await client.execute(HTTPRequest(url: url(peer.url("/redirect/11"))))
            Issue.record("expected too-many-redirects")
        } catch {
            #expect(error.kind == .tooManyRedirects)
        }
        // With redirects off the 302 itself is the answer.
        let raw = try await client.execute(HTTPRequest(url: url(peer.url("/redirect/1")), maxRedirects: 0))
        #expect(raw.status == 302)
    }

    @Test func aRedirectWithAnEmptyLocationIsTheAnswer() async throws {
        // curl's behaviour: a Location that points nowhere is not followed, nor an error.
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 302, headers: [("Location", "")], body: "moved") }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let response = try await client.execute(HTTPRequest(url: url(server.url("/a"))))
        #expect(response.status == 302)
        #expect(response.body == Array("moved".utf8))
        #expect(response.metrics.redirects == 0)
        #expect(server.requests.count == 1)
    }

    @Test func redirectMethodAndBodyRules() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let body = Array(repeating: UInt8(ascii: "x"), count: 1000)
        for (status, method, length) in [(303, "GET", 0), (302, "GET", 0), (307, "POST", 1000), (308, "POST", 1000)] {
            let location = "/echo".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let response = try await client.execute(
                HTTPRequest(method: .post, url: url(peer.url("/redirect-to?status=\(status)&location=\(location)")), body: .bytes(body))
            )
            let doc = try json(response.body)
            #expect(doc["method"] as? String == method, "\(status)")
            #expect(doc["body_len"] as? Int == length, "\(status)")
        }
    }

    @Test func credentialsAreDroppedOnACrossOriginHop() async throws {
        let a = try await PythonPeer.start()
        let b = try await PythonPeer.start()
        defer { a.stop(); b.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let target = b.url("/echo").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer secret")
        headers.add(name: "Cookie", value: "session=1")
        headers.add(name: "X-Keep", value: "yes")
        let response = try await client.execute(
            HTTPRequest(url: url(a.url("/redirect-to?status=302&location=\(target)")), headers: headers)
        )
        let names = (try json(response.body)["headers"] as! [[String]]).map { $0[0].lowercased() }
        #expect(!names.contains("authorization"))
        #expect(!names.contains("cookie"))
        #expect(names.contains("x-keep"))
        // Same origin keeps them.
        let same = try await client.execute(
            HTTPRequest(url: url(a.url("/redirect-to?status=302&location=%2Fecho")), headers: headers)
        )
        let sameNames = (try json(same.body)["headers"] as! [[String]]).map { $0[0].lowercased() }
        #expect(sameNames.contains("authorization"))
    }

    @Test func requestBodiesFixedAndStreamed() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let big = pattern(200_000)
        let fixed = try await client.execute(HTTPRequest(method: .put, url: url(peer.url("/echo")), body: .bytes(big)))
        #expect(try json(fixed.body)["body_len"] as? Int == 200_000)
        #expect(fixed.metrics.bytesSent > 200_000)
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        for i in 0..<10 { continuation.yield(Array(big[(i * 20_000)..<((i + 1) * 20_000)])) }
        continuation.finish()
        let streamed = try await client.execute(HTTPRequest(method: .post, url: url(peer.url("/echo")), body: .stream(stream)))
        let doc = try json(streamed.body)
        #expect(doc["body_len"] as? Int == 200_000)
        #expect((doc["headers"] as! [[String]]).contains(["Transfer-Encoding", "chunked"]))
    }

    @Test func headAndNoContentHaveNoBody() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let head = try await client.execute(HTTPRequest(method: .head, url: url(peer.url("/bytes/1000"))))
        #expect(head.headers["content-length"] == "1000")
        #expect(head.body.isEmpty)
        let noContent = try await client.execute(HTTPRequest(url: url(peer.url("/status/204"))))
        #expect(noContent.status == 204 && noContent.body.isEmpty)
        // The connection is still in sync afterwards.
        let next = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10"))))
        #expect(next.body == pattern(10))
    }

    @Test func manyConcurrentRequestsOnASmallPool() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maxConnectionsPerHost = 2
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<60 {
                group.addTask {
                    let r = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/\(i * 10)"))))
                    #expect(r.body == pattern(i * 10))
                }
            }
            for try await _ in group {}
        }
        let count = try await client.execute(HTTPRequest(url: url(peer.url("/connections"))))
        #expect((try json(count.body)["accepted"] as? Int ?? 99) <= 2)
    }

    @Test func streamingDeliversChunksAndCancellationResumesPromptly() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let progress = Atomic<Int>(0)
        let task = Task {
            let response = try await client.stream(HTTPRequest(url: url(peer.url("/slow/2000?delay_ms=5"))))
            var received = 0
            for try await chunk in response.body {
                received += chunk.count
                progress.store(received, ordering: .relaxed)
            }
            return received
        }
        // Cancel mid-body (not while connecting, when the new connection may rightly stay pooled), however
        // slowly the machine starts the peer.
        let started = ContinuousClock.now + .seconds(10)
        while progress.load(ordering: .relaxed) == 0 && ContinuousClock.now < started { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        do {
            let n = try await task.value
            Issue.record("the body finished (\(n) bytes) instead of being cancelled")
        } catch let error as CourierError {
            #expect(error.kind == .cancelled)
        }
        #expect(ContinuousClock.now - cancelledAt < .seconds(2))
        // The cancelled body's connection is closed, not returned to the pool.
        let deadline = ContinuousClock.now + .seconds(2)
        while client.openConnectionCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(client.openConnectionCount == 0)
    }

    /// A client with one connection per host, busy with a request whose response the server holds until the
    /// test opens the gate, so the connection stays busy for as long as the test needs, whatever the machine's load.
    private func oneBusyConnection() async throws -> (Gate, ScriptedServer, HTTPClient, Task<HTTPResponse, any Error>) {
        let gate = Gate()
        let server = try ScriptedServer { c in
            while c.readRequestHead() != nil {
                if c.index == 1 && gate.isClosed { gate.waitOpen() }
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        var configuration = HTTPClientConfiguration()
        configuration.maxConnectionsPerHost = 1
        let client = HTTPClient(configuration: configuration)
        let busy = Task { try await client.execute(HTTPRequest(url: url(server.url("/busy")))) }
        while server.acceptedConnections == 0 { try await Task.sleep(for: .milliseconds(5)) }
        return (gate, server, client, busy)
    }

    @Test func aRequestWaitingForAConnectionCanBeCancelled() async throws {
        let (gate, server, client, busy) = try await oneBusyConnection()
        defer { client.shutdown() }
        let waiting = Task { try await client.execute(HTTPRequest(url: url(server.url("/queued")))) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelledAt = ContinuousClock.now
        waiting.cancel()
        do {
            _ = try await waiting.value
            Issue.record("the queued request was not cancelled")
        } catch let error as CourierError {
            #expect(error.kind == .cancelled)
        }
        #expect(ContinuousClock.now - cancelledAt < .seconds(2))
        // The busy request is unaffected and the pool still works afterwards, on the same connection.
        gate.open()
        #expect(try await busy.value.body == Array("ok".utf8))
        #expect(try await client.execute(HTTPRequest(url: url(server.url("/after")))).body == Array("ok".utf8))
        #expect(server.acceptedConnections == 1)
    }

    @Test func aRequestCancelledBeforeItQueuesForAConnectionIsNotLeftWaiting() async throws {
        // Its cancellation handler runs before the pool has queued it: the pool must still see the cancellation
        // once it has, or the request waits for the busy connection (here: until the gate's 10 s bound).
        let (gate, server, client, busy) = try await oneBusyConnection()
        defer { client.shutdown() }
        let start = ContinuousClock.now
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.execute(HTTPRequest(url: url(server.url("/queued"))))
        }
        do {
            _ = try await waiting.value
            Issue.record("the cancelled request was served")
        } catch let error as CourierError {
            #expect(error.kind == .cancelled)
        }
        #expect(ContinuousClock.now - start < .seconds(2))
        gate.open()
        #expect(try await busy.value.body == Array("ok".utf8))
    }

    @Test func idleConnectionsCloseAfterTheIdleTimeout() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.idleTimeout = .milliseconds(200)
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        _ = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10"))))
        #expect(client.openConnectionCount == 1)
        try await Task.sleep(for: .milliseconds(600))
        #expect(client.openConnectionCount == 0)
        // A later request simply connects again.
        let again = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10"))))
        #expect(again.metrics.reusedConnection == false)
    }

    @Test func reusingAConnectionRestartsItsIdlePeriod() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.idleTimeout = .milliseconds(800)
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        let start = ContinuousClock.now
        _ = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10"))))
        try await Task.sleep(until: start + .milliseconds(500))
        let second = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10"))))
        let secondDone = ContinuousClock.now
        #expect(second.metrics.reusedConnection)
        // The timer armed for the first idle period fires about 800 ms after the start; by then the connection
        // has been idle for about 300 ms only, so it must stay open (checked only if the machine kept up).
        try await Task.sleep(until: start + .milliseconds(1100))
        if ContinuousClock.now - secondDone < .milliseconds(700) {
            #expect(client.openConnectionCount == 1)
        }
        // It closes once it has been idle for the whole timeout since its last use, and not before.
        let deadline = ContinuousClock.now + .seconds(5)
        while client.openConnectionCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(client.openConnectionCount == 0)
        #expect(ContinuousClock.now - secondDone >= .milliseconds(750))
    }

    @Test func totalDeadlineCoversTheBody() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let started = ContinuousClock.now
        do {
            _ = try await client.execute(HTTPRequest(
                url: url(peer.url("/slow/1000?delay_ms=5")),
                timeouts: TimeoutPolicy(connect: .seconds(2), idle: .seconds(2), total: .milliseconds(400))
            ))
            Issue.record("expected a timeout")
        } catch {
            #expect(error.kind == .timeout)
        }
        let took = ContinuousClock.now - started
        // A lower bound proves the deadline was not cut short; the upper one only that nothing hung (CI machines
        // are small and shared).
        #expect(took >= .milliseconds(350) && took < .seconds(10))
    }

    // Ten thousand requests are seconds of CPU in a debug build: at the lowest priority, beside the timing tests.
    @Test(.onThreadsOfTheirOwn) func noDescriptorLeaksAfterTenThousandRequests() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let before = try OpenFileDescriptors.countNotOnDisk()
        let client = HTTPClient()
        let target = url(peer.url("/bytes/100"))
        for _ in 0..<10_000 {
            let r = try await client.execute(HTTPRequest(url: target))
            #expect(r.body.count == 100)
        }
        // New connections every time, too (the server closes each one).
        for _ in 0..<200 {
            _ = try await client.execute(HTTPRequest(url: url(peer.url("/close"))))
        }
        #expect(client.openConnectionCount <= 1)
        client.shutdown()
        #expect(try await settledDescriptorCount(atMost: before) <= before)
    }
}

@Suite(.timeLimit(.minutes(1))) struct HTTPClientAgainstHostileServerTests {

    @Test(arguments: [
        ("conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
        ("TE and CL", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
        ("obs-fold after the status line", "HTTP/1.1 200 OK\r\n  folded\r\nContent-Length: 0\r\n\r\n"),
        ("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
        ("cut short", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this much"),
        ("cut chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"),
        ("garbage", "\u{1}\u{2}\u{3} not http at all\r\n\r\n"),
    ])
    func framingViolationsAreProtocolErrors(_ name: String, _ response: String) async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.write(response)
            c.close()
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        await expectKind(.protocol) { _ = try await client.execute(HTTPRequest(url: url(server.url("/")))) }
    }

    @Test func byteByByteServerWorks() async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.writeSlowly("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Slow: yes\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", pause: .milliseconds(1))
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        let r = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(r.body == Array("hello world".utf8))
        #expect(r.headers["x-slow"] == "yes")
    }

    @Test func interimResponsesAreSkipped() async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        let r = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(r.status == 200 && r.body == Array("ok".utf8))
    }

    @Test func resetMidBodyIsAnError() async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "a", count: 5000))
            Thread.sleep(forTimeInterval: 0.05)
            c.reset()
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        await expectKind(.protocol) { _ = try await client.execute(HTTPRequest(url: url(server.url("/")))) }
    }

    @Test func idleKeepAliveClosedByServerIsRetriedOnAFreshConnection() async throws {
        // Connection 1 answers one request, then takes the second request and closes without a byte: the
        // classic keep-alive race. Connection 2 answers.
        let server = try ScriptedServer { c in
            if c.index == 1 {
                c.readRequestHead()
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
                c.readRequestHead()
                c.close()
            } else {
                c.readRequestHead()
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond")
            }
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        let first = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(first.body == Array("first".utf8))
        let second = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(second.body == Array("second".utf8))
        #expect(second.metrics.attempts == 2 || server.acceptedConnections == 2)
        #expect(server.acceptedConnections == 2)
        // A non-idempotent request is not retried that way.
        let server2 = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1")
            c.readRequestHead()
            _ = c.readBytes(1)
            c.close()
        }
        _ = try await client.execute(HTTPRequest(url: url(server2.url("/"))))
        await expectKind(.protocol) {
            _ = try await client.execute(HTTPRequest(method: .post, url: url(server2.url("/")), body: .bytes([1])))
        }
        #expect(server2.acceptedConnections == 1)
    }

    @Test func aRequestThatAsksToCloseDoesNotReuseItsConnection() async throws {
        // The server closes after each answer without saying so: only the client's own header tells.
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            c.close()
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        var headers = HTTPHeaders()
        headers.add(name: "Connection", value: "close")
        for _ in 0..<20 {
            let r = try await client.execute(HTTPRequest(url: url(server.url("/")), headers: headers))
            #expect(r.body == Array("ok".utf8))
            #expect(r.metrics.reusedConnection == false && r.metrics.attempts == 1)
        }
        #expect(server.acceptedConnections == 20)
        #expect(client.openConnectionCount == 0)
    }

    @Test func idleTimeoutWhenTheServerNeverAnswers() async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            _ = c.readsEOF()  // wait for the client to give up
        }
        await expectIdleTimeout(from: server)
    }

    @Test func headerInjectionIsRefusedBeforeConnecting() async throws {
        let server = try ScriptedServer { c in c.readRequestHead() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var headers = HTTPHeaders()
        headers.add(name: "X-Evil", value: "a\r\nInjected: yes")
        await expectKind(.policy) { _ = try await client.execute(HTTPRequest(url: url(server.url("/")), headers: headers)) }
        await expectKind(.policy) { _ = try await client.execute(HTTPRequest(method: "GE T", url: url(server.url("/")))) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(server.acceptedConnections == 0)
    }

    @Test func connectionRefusedIsAConnectError() async throws {
        // A port held bound but not listening: refused, and never handed to another test's server meanwhile (a
        // stopped server's port was, and this test's request once reached an OAuth test's token server).
        let closed = try ClosedPort()
        let client = HTTPClient()
        defer { client.shutdown() }
        await expectKind(.connect) { _ = try await client.execute(HTTPRequest(url: url(closed.url("/")))) }
    }

    @Test func everyRequestWaitingOnAFailedConnectGetsTheSocketsOwnError() async throws {
        // One connection at a time: the requests queue, each connect attempt answers for the oldest one, and each
        // gets the error of the attempt made for it (the socket's refusal as the cause), never a stand-in.
        let closed = try ClosedPort()
        var configuration = HTTPClientConfiguration()
        configuration.maxConnectionsPerHost = 1
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        let errors = await withTaskGroup(of: CourierError?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        _ = try await client.execute(HTTPRequest(url: url(closed.url("/"))))
                        return nil
                    } catch let error as CourierError {
                        return error
                    } catch {
                        return nil
                    }
                }
            }
            return await group.reduce(into: [CourierError?]()) { $0.append($1) }
        }
        #expect(errors.count == 4)
        for error in errors {
            #expect(error?.kind == .connect, "\(String(describing: error))")
            #expect(error?.cause is ConnectionError, "\(String(describing: error))")
        }
    }
}

/// A one-shot gate for scripted servers: handlers wait on it until the test opens it.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var opened = false

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !opened
    }

    func open() {
        condition.lock()
        opened = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits (at most 10 s, so a failing test cannot hang) until the gate opens.
    func waitOpen() {
        condition.lock()
        let deadline = Date().addingTimeInterval(10)
        while !opened && condition.wait(until: deadline) {}
        condition.unlock()
    }
}
