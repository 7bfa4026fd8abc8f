import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The streaming API (`DataLoader.stream`) and request body streams, against real loopback servers.
@Suite struct LoaderStreamingTests {
    static let policy = """
        version: 1
        services:
          api:
            hosts: [127.0.0.1]
            retry:
              max-attempts: 3
              on: [503, connection-lost]
              backoff: { initial: 20ms, multiplier: 2, jitter: none }
        """

    /// Collects a stream's events; chunks are joined per attempt.
    struct Recorded {
        var heads: [ResponseHead] = []
        var retries: [(attempt: Int, reason: String)] = []
        var bodies: [[UInt8]] = []
        var final: Response?
        var order: [String] = []
    }

    static func record(_ stream: LoadStream) async throws(CourierError) -> Recorded {
        var r = Recorded()
        for try await event in stream {
            switch event {
            case .response(let head):
                r.heads.append(head)
                r.bodies.append([])
                r.order.append("response(\(head.attempt), \(head.status))")
            case .chunk(let bytes):
                r.bodies[r.bodies.count - 1] += bytes
                if r.order.last != "chunk" { r.order.append("chunk") }
            case .retrying(let attempt, let reason):
                r.retries.append((attempt, reason))
                r.order.append("retrying(\(attempt))")
            case .resuming(let attempt, let offset, _):
                r.order.append("resuming(\(attempt), \(offset))")
            case .finished(let response):
                r.final = response
                r.order.append("finished")
            }
        }
        return r
    }

    @Test func aStreamDeliversTheHeadThenTheBodyInChunksThenTheFigures() async throws {
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let server = try ScriptedServer { c in
            while c.readRequestHead() != nil {
                c.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nX-Kind: stream\r\n\r\n")
                c.write(body)
            }
        }
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()
        let r = try await Self.record(loader.stream(Request(url: server.url("/file"))))
        #expect(r.order == ["response(1, 200)", "chunk", "finished"])
        #expect(r.heads.first?.headers["x-kind"] == "stream")
        #expect(r.heads.first?.reason == "OK")
        #expect(r.bodies == [body])
        let final = try #require(r.final)
        #expect(final.status == 200 && final.attempts == 1 && final.body.isEmpty)
        #expect(final.bytesReceived > Int64(body.count))
        #expect(final.bytesSent > 0)
    }

    @Test func aRetriedStatusIsAnnouncedAndOnlyTheFinalBodyIsDelivered() async throws {
        let server = try RecordingServer { index, _ in
            index < 2 ? RecordingServer.Reply(status: 503, body: "busy \(index)") : RecordingServer.Reply(status: 200, body: "the real body")
        }
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()
        let r = try await Self.record(loader.stream(Request(url: server.url("/a"))))
        #expect(r.order == ["retrying(2)", "retrying(3)", "response(3, 200)", "chunk", "finished"])
        #expect(r.retries.map(\.reason) == ["status 503", "status 503"])
        #expect(r.bodies == [Array("the real body".utf8)])
        #expect(r.final?.attempts == 3)
        #expect(server.requests.count == 3)
        // load(_:) gives the same final response, reason phrase included, with the body whole.
        let whole = try await loader.load(Request(url: server.url("/b")))
        #expect(whole.status == 200 && whole.reason == "Scripted" && whole.body == Array("the real body".utf8))
    }

    @Test func aBodyCutOffMidwayIsRetriedAndTheStreamSaysWhichAttemptStartsAgain() async throws {
        let full = Array(String(repeating: "0123456789", count: 100).utf8)
        let server = try ScriptedServer { c in
            guard c.readRequestHead() != nil else { return }
            if c.index == 1 {
                // The first connection promises 1000 bytes, sends 300, then the connection dies.
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                c.write(Array(full[..<300]))
                Thread.sleep(forTimeInterval: 0.05)
                c.reset()
                return
            }
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            c.write(full)
        }
        let service = try makeService(Self.policy)
        let observed = Mutex<[Consumption]>([])
        service.addConsumptionObserver { c in observed.withLock { $0.append(c) } }
        let loader = service.makeFactory().makeLoader()
        let r = try await Self.record(loader.stream(Request(url: server.url("/cut"), sourceIdentifier: "player")))
        #expect(r.order == ["response(1, 200)", "chunk", "retrying(2)", "response(2, 200)", "chunk", "finished"])
        #expect(r.bodies.count == 2)
        #expect(r.bodies.first.map { Array(full.prefix($0.count)) == $0 && $0.count == 300 } == true)
        #expect(r.bodies.last == full)
        #expect(r.retries.first?.reason.hasPrefix("protocol") == true)
        #expect(r.final?.attempts == 2)
        // The failed attempt's bytes are on the bill too: two heads and 1300 body bytes at least.
        let consumption = try #require(observed.withLock { $0.first })
        #expect(consumption.sourceIdentifier == "player")
        #expect(consumption.bytesReceived >= 1300 + 2 * 38)
        #expect(consumption.bytesReceived == r.final?.bytesReceived)
        #expect(consumption.bytesSent == r.final?.bytesSent && consumption.bytesSent > 0)
    }

    @Test func aCutOffBodyThatIsNotRetriedFailsAfterItsChunks() async throws {
        let server = try ScriptedServer { c in
            guard c.readRequestHead() != nil else { return }
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            Thread.sleep(forTimeInterval: 0.05)
            c.close()
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { on: [503] }
            """)
        let loader = service.makeFactory().makeLoader()
        var received: [UInt8] = []
        var heads = 0
        do {
            for try await event in loader.stream(Request(url: server.url("/cut"))) {
                if case .response = event { heads += 1 }
                if case .chunk(let bytes) = event { received += bytes }
            }
            Issue.record("the stream ended without an error")
        } catch {
            #expect(error.kind == .protocol)
            // What the failed request moved is on the error too: its request and the head and 10 body bytes.
            #expect(error.attempts == 1)
            #expect(error.bytesSent > 0 && error.bytesReceived >= 10 + 38)
        }
        #expect(heads == 1)
        #expect(received == Array("0123456789".utf8))
    }

    @Test func theBodyIsReadOnlyAsFastAsTheStreamIsConsumed() async throws {
        let total = 32 << 20
        let written = Atomic<Int>(0)
        let server = try ScriptedServer { c in
            guard c.readRequestHead() != nil else { return }
            c.write("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n")
            let piece = [UInt8](repeating: 0x61, count: 64 << 10)
            for _ in 0..<(total / piece.count) {
                c.write(piece)
                written.add(piece.count, ordering: .relaxed)
            }
        }
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()
        var iterator = loader.stream(Request(url: server.url("/big"))).makeAsyncIterator()
        guard case .response = try await iterator.next() else { Issue.record("no head first"); return }
        guard case .chunk = try await iterator.next() else { Issue.record("no chunk"); return }
        // The consumer pauses: the client must not keep reading, so the server's writes stall once the socket
        // buffers (a few MiB on loopback) are full.
        try await Task.sleep(for: .milliseconds(400))
        let stalled = written.load(ordering: .relaxed)
        #expect(stalled < total / 2, "the server wrote \(stalled) bytes while the consumer paused")
        var bytes = 0
        while let event = try await iterator.next() {
            if case .chunk(let chunk) = event { bytes += chunk.count }
        }
        #expect(bytes > total - stalled - (1 << 20))
        #expect(written.load(ordering: .relaxed) == total)
    }

    @Test func cancellingTheConsumerOrDroppingTheStreamCancelsTheRequestAtOnce() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 200, delay: .seconds(10)) }
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()

        let task = Task { () async throws -> Int in
            var n = 0
            for try await _ in loader.stream(Request(url: server.url("/slow/1"))) { n += 1 }
            return n
        }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect((ContinuousClock.now - start) < .seconds(5))  // the server answers after 10 s
        #expect(throws: CourierError.self) { try result.get() }
        if case .failure(let error) = result { #expect((error as? CourierError)?.kind == .cancelled) }

        // A stream dropped before its end takes its request with it.
        var stream: LoadStream? = loader.stream(Request(url: server.url("/slow/2")))
        try await Task.sleep(for: .milliseconds(100))
        #expect(loader.activeRequests == 1)
        stream = nil
        _ = stream
        try await Task.sleep(for: .milliseconds(100))
        #expect(loader.activeRequests == 0)

        // A loader cancelled while its stream is read ends the loop with `cancelled`.
        let reading = Task { () async throws -> Void in
            for try await _ in loader.stream(Request(url: server.url("/slow/3"))) {}
        }
        try await Task.sleep(for: .milliseconds(100))
        loader.cancelAll()
        let outcome = await reading.result
        if case .failure(let error) = outcome { #expect((error as? CourierError)?.kind == .cancelled) } else { Issue.record("the loop ended normally") }
    }

    @Test func aStreamedRequestBodyIsSentChunkedAndMadeAfreshForEachAttempt() async throws {
        let bodies = Mutex<[[UInt8]]>([])
        let server = try ScriptedServer { c in
            while let head = c.readRequestHead() {
                guard head.lowercased().contains("transfer-encoding: chunked"), let body = readChunked(c) else {
                    c.write("HTTP/1.1 400 Bad\r\nContent-Length: 0\r\n\r\n")
                    return
                }
                let n = bodies.withLock { list in
                    list.append(body)
                    return list.count
                }
                c.write(n == 1 ? "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry:
                  on: [503]
                  methods: [PUT]
                  backoff: { initial: 10ms, jitter: none }
            """)
        let loader = service.makeFactory().makeLoader()
        let made = Atomic<Int>(0)
        let upload = RequestBodyStream {
            made.add(1, ordering: .relaxed)
            return AsyncThrowingStream { continuation in
                for i in 0..<5 { continuation.yield(Array(repeating: UInt8(0x30 + i), count: 1000)) }
                continuation.finish()
            }
        }
        let response = try await loader.load(Request(url: server.url("/upload"), method: .put, bodyStream: upload))
        #expect(response.status == 200 && response.attempts == 2)
        #expect(made.load(ordering: .relaxed) == 2)
        let expected = (0..<5).flatMap { Array(repeating: UInt8(0x30 + $0), count: 1000) }
        #expect(bodies.withLock { $0 } == [expected, expected])
    }

    @Test func aBodyStreamThatFailsFailsTheRequestWithoutACompleteLookingBody() async throws {
        let complete = Atomic<Int>(0)
        let server = try ScriptedServer { c in
            while c.readRequestHead() != nil {
                guard readChunked(c) != nil else { return }
                complete.add(1, ordering: .relaxed)
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        struct Broken: Error {}
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()
        let upload = RequestBodyStream {
            AsyncThrowingStream { continuation in
                continuation.yield(Array("part".utf8))
                continuation.finish(throwing: Broken())
            }
        }
        await #expect(throws: CourierError.self) {
            try await loader.load(Request(url: server.url("/upload"), method: .post, bodyStream: upload))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(complete.load(ordering: .relaxed) == 0)
    }
}

/// Reads a chunked request body (no extensions or trailers); nil when it is malformed or cut short.
func readChunked(_ c: ScriptedServer.Connection) -> [UInt8]? {
    func line() -> String? {
        var bytes: [UInt8] = []
        while true {
            guard let b = c.readBytes(1) else { return nil }
            if b[0] == 0x0A { break }
            if b[0] != 0x0D { bytes.append(b[0]) }
            if bytes.count > 100 { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    var body: [UInt8] = []
    while true {
        guard let sizeLine = line(), let size = Int(sizeLine, radix: 16) else { return nil }
        if size == 0 {
            guard line() == "" else { return nil }
            return body
        }
        guard let data = c.readBytes(size), line() == "" else { return nil }
        body += data
    }
}
