import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Resumed downloads against real peers: nginx (its own `Range`, `If-Range` and `206`) behind a proxy that cuts each
/// response at random offsets, and scripted servers for the answers nginx does not give (a mismatched
/// `Content-Range`, a weak `ETag`).
@Suite struct LoaderResumeTests {
    static let policy = """
        version: 1
        services:
          files:
            hosts: [127.0.0.1]
            timeouts: { idle: 400ms, total: 120s }
            retry:
              max-attempts: 100
              on: [connection-lost, timeout]
              backoff: { initial: 1ms, max: 2ms, multiplier: 1, jitter: none }
              budget: off
        """

    /// What a stream delivered: the bytes as one body (restarts drop what came before), and the events.
    struct Received {
        var body: [UInt8] = []
        var heads: [ResponseHead] = []
        var resumptions: [(attempt: Int, offset: Int64)] = []
        var restarts: [(attempt: Int, reason: String)] = []
        var final: Response?
    }

    static func receive(_ stream: LoadStream, onChunk: (Int) -> Void = { _ in }) async throws(CourierError) -> Received {
        var r = Received()
        for try await event in stream {
            switch event {
            case .response(let head): r.heads.append(head)
            case .chunk(let bytes):
                r.body += bytes
                onChunk(r.body.count)
            case .retrying(let attempt, let reason):
                r.restarts.append((attempt, reason))
                r.body = []
            case .resuming(let attempt, let offset, _):
                #expect(offset == Int64(r.body.count), "a resumption continues where the bytes stopped")
                r.resumptions.append((attempt, offset))
            case .finished(let response): r.final = response
            }
        }
        return r
    }

    static func seed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["COURIER_RESUME_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64.max)
    }

    static func bytes(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var word = random.next()
            for _ in 0..<8 where i < count {
                out[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
        return out
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        var digest = MessageDigest(.sha256)
        digest.update(bytes)
        return MessageDigest.hex(digest.finalize())
    }

    @Test func aDownloadCutAtRandomOffsetsArrivesByteIdenticalResumingWhereItBroke() async throws {
        let seed = Self.seed()
        print("LoaderResumeTests: seed \(seed) (COURIER_RESUME_SEED=\(seed) repeats the run)")
        var random = SplitMix64(seed: seed)
        let size = 5_000_000 + Int(random.next() % 15_000_001)
        let file = Self.bytes(size, &random)
        let nginx = try await NginxServer.start()
        try nginx.serve("blob.bin", file)
        // Resets, closes before Content-Length, and one in five a stall the idle timeout ends.
        let proxy = try await CuttingProxy.start(upstream: nginx.port, seed: seed, cutBetween: 300_000...4_000_000, stallEvery: 5)
        let service = try makeService(Self.policy)
        let loader = service.makeFactory().makeLoader()
        let r = try await Self.receive(loader.stream(Request(url: proxy.url("/blob.bin"))))
        // Closing the last connection (kept alive) ends its line in the proxy's log too.
        await service.shutdown(gracePeriod: .zero)
        #expect(r.body.count == size, "seed \(seed)")
        #expect(Self.sha256(r.body) == Self.sha256(file), "seed \(seed)")
        // One head, never a restart: every break was continued by a 206.
        #expect(r.heads.count == 1 && r.heads.first?.status == 200)
        #expect(r.restarts.isEmpty, "seed \(seed): \(r.restarts)")
        #expect(!r.resumptions.isEmpty, "seed \(seed): a cut at 4 MB at most in a file of 5 MB or more")
        #expect(r.resumptions.map(\.offset) == r.resumptions.map(\.offset).sorted())
        let connections = await proxy.connections(atLeast: r.resumptions.count + 1)
        #expect(connections.count == r.resumptions.count + 1, "seed \(seed): one connection per attempt")
        let final = try #require(r.final)
        #expect(final.status == 200 && final.attempts == r.resumptions.count + 1)
        #expect(final.headers["content-length"] == String(size))
        // What came over the wire: the file once, one head per attempt, and at most one chunk's worth more.
        let heads = Int64(connections.count * 1024)
        #expect(final.bytesReceived >= Int64(size), "seed \(seed)")
        #expect(final.bytesReceived <= Int64(size) + heads + 65_536, "seed \(seed): \(final.bytesReceived) bytes for \(size)")
        let forwarded = connections.reduce(0) { $0 + $1.forwarded }
        print("LoaderResumeTests: \(size) bytes in \(connections.count) attempts (\(connections.map(\.how))), \(forwarded) forwarded, \(final.bytesReceived) read")
    }

    @Test func aChangedFileAnswersTheRangeRequestWith200AndTheStreamRestarts() async throws {
        var random = SplitMix64(seed: 26)
        let old = Self.bytes(2_000_000, &random)
        let new = Self.bytes(2_000_000, &random)
        let nginx = try await NginxServer.start()
        try nginx.serve("blob.bin", old)
        let proxy = try await CuttingProxy.start(upstream: nginx.port, seed: 26, cutBetween: 500_000...1_000_000, cuts: 1)
        let loader = try makeService(Self.policy).makeFactory().makeLoader()
        var replaced = false
        let r = try await Self.receive(loader.stream(Request(url: proxy.url("/blob.bin")))) { _ in
            guard !replaced else { return }
            replaced = true
            // A new file (renamed over the old one: nginx keeps sending the old one) with another mtime, so another
            // ETag: the retry's If-Range no longer matches.
            let path = nginx.root + "/blob.bin"
            try? Data(new).write(to: URL(fileURLWithPath: path + ".new"))
            chmod(path + ".new", 0o644)
            var times = [timeval(tv_sec: 1_000_000_000, tv_usec: 0), timeval(tv_sec: 1_000_000_000, tv_usec: 0)]
            _ = utimes(path + ".new", &times)
            _ = rename(path + ".new", path)
        }
        #expect(r.body == new)
        #expect(r.resumptions.isEmpty)
        #expect(r.restarts.count == 1)
        #expect(r.restarts.first?.reason == "status 200: the server sent the whole body again")
        #expect(r.heads.map(\.attempt) == [1, 2])
        #expect(r.final?.status == 200)
    }

    /// A server whose first answer is a 200 with `headers` that breaks off after 400 of its 1000 bytes, and whose
    /// second answers with `second`; the requests it got.
    static func breakingServer(headers: String, second: @escaping @Sendable (ScriptedServer.Connection) -> Void) throws -> (ScriptedServer, RequestHeads) {
        let body = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let requests = RequestHeads()
        let server = try ScriptedServer { c in
            guard let head = c.readRequestHead() else { return }
            let index = requests.heads.withLock { $0.append(head); return $0.count }
            if index == 1 {
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\(headers)\r\n")
                c.write(Array(body[..<400]))
                Thread.sleep(forTimeInterval: 0.05)
                c.reset()
            } else {
                second(c)
            }
        }
        return (server, requests)
    }

    static let rest = Array((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }[400...])

    @Test func aMismatchedContentRangeFailsWithAProtocolError() async throws {
        let (server, requests) = try Self.breakingServer(headers: "ETag: \"v1\"\r\n") { c in
            c.write("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 300-999/1000\r\nContent-Length: 700\r\n\r\n")
            c.write(Array(repeating: 0, count: 700))
        }
        let loader = try makeService(Self.policy).makeFactory().makeLoader()
        do {
            _ = try await Self.receive(loader.stream(Request(url: server.url("/file"))))
            Issue.record("a mismatched Content-Range was accepted")
        } catch {
            #expect(error.kind == .protocol)
            #expect(error.message.contains("could not be resumed") && error.message.contains("does not start at byte 400"), "\(error)")
        }
        let second = try #require(requests.heads.withLock { $0 }.last)
        #expect(second.contains("Range: bytes=400-"))
        #expect(second.contains("If-Range: \"v1\""))
    }

    @Test func aWeakETagDoesNotResumeTheBodyRestarts() async throws {
        let body = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let (server, requests) = try Self.breakingServer(headers: "ETag: W/\"v1\"\r\n") { c in
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: W/\"v1\"\r\n\r\n")
            c.write(body)
        }
        let loader = try makeService(Self.policy).makeFactory().makeLoader()
        let r = try await Self.receive(loader.stream(Request(url: server.url("/file"))))
        #expect(r.body == body)
        #expect(r.resumptions.isEmpty && r.restarts.count == 1)
        let second = try #require(requests.heads.withLock { $0 }.last)
        #expect(!second.contains("Range:"))
    }

    @Test func aDelegateIsToldOfTheResumptionAndGetsTheWholeBody() async throws {
        let (server, _) = try Self.breakingServer(headers: "ETag: \"v1\"\r\n") { c in
            c.write("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 400-999/1000\r\nContent-Length: 600\r\n\r\n")
            c.write(Self.rest)
        }
        let loader = try makeService(Self.policy).makeFactory().makeLoader()
        let delegate = ResumeRecordingDelegate()
        loader.load(Request(url: server.url("/file")), delegate: delegate)
        let outcome = await delegate.outcome()
        let response = try #require(try? outcome.get())
        #expect(response.status == 200)
        #expect(response.body == (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(delegate.events.withLock { $0 } == ["head 1", "resumed 2 from 400", "success"])
    }
}

/// The request heads a scripted server got, in order.
final class RequestHeads: Sendable {
    let heads = Mutex<[String]>([])
}

/// Records a delegate's callbacks (heads, retries, resumptions) and its one outcome.
final class ResumeRecordingDelegate: DataLoaderDelegate {
    let events = Mutex<[String]>([])
    private let result = Mutex<(Result<Response, CourierError>?, CheckedContinuation<Result<Response, CourierError>, Never>?)>((nil, nil))

    func outcome() async -> Result<Response, CourierError> {
        await withCheckedContinuation { continuation in
            let ready = result.withLock { state -> Result<Response, CourierError>? in
                if let done = state.0 { return done }
                state.1 = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func finish(_ outcome: Result<Response, CourierError>) {
        let waiting = result.withLock { state -> CheckedContinuation<Result<Response, CourierError>, Never>? in
            state.0 = outcome
            defer { state.1 = nil }
            return state.1
        }
        waiting?.resume(returning: outcome)
    }

    func didReceiveSuccessfulResponse(_ response: Response, for load: LoadHandle) {
        events.withLock { $0.append("success") }
        finish(.success(response))
    }
    func didReceiveErrorResponse(_ response: Response?, error: CourierError, for load: LoadHandle) {
        events.withLock { $0.append("error") }
        finish(.failure(error))
    }
    func didCancel(_ load: LoadHandle) {
        finish(.failure(CourierError(.cancelled, "cancelled")))
    }
    func didReceiveInitialResponse(_ head: ResponseHead, for load: LoadHandle) {
        events.withLock { $0.append("head \(head.attempt)") }
    }
    func willRetry(_ load: LoadHandle, attempt: Int, reason: String) {
        events.withLock { $0.append("retry \(attempt)") }
    }
    func didResume(_ load: LoadHandle, attempt: Int, from offset: Int64, reason: String) {
        events.withLock { $0.append("resumed \(attempt) from \(offset)") }
    }
}
