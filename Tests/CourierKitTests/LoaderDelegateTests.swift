import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The delegate API (`DataLoader.load(_:delegate:)`): SPTDataLoader's callbacks with exactly one terminal
/// callback per request, against real loopback servers.
@Suite struct LoaderDelegateTests {
    /// Records every callback per request, in order.
    final class Recorder: DataLoaderDelegate {
        enum Callback: Equatable {
            case success(status: Int, bodyBytes: Int)
            case errorResponse(status: Int?, kind: String)
            case cancelled
            case initial(status: Int, attempt: Int)
            case chunk(Int)
            case retry(Int)

            var isTerminal: Bool {
                switch self {
                case .success, .errorResponse, .cancelled: return true
                default: return false
                }
            }
        }

        let log = Mutex<[LoadHandle: [Callback]]>([:])
        let terminals = AsyncStream<Void>.makeStream()

        private func add(_ callback: Callback, _ load: LoadHandle) {
            log.withLock { $0[load, default: []].append(callback) }
            if callback.isTerminal { terminals.continuation.yield() }
        }

        func didReceiveSuccessfulResponse(_ response: Response, for load: LoadHandle) {
            add(.success(status: response.status, bodyBytes: response.body.count), load)
        }
        func didReceiveErrorResponse(_ response: Response?, error: CourierError, for load: LoadHandle) {
            add(.errorResponse(status: response?.status, kind: error.kind.rawValue), load)
        }
        func didCancel(_ load: LoadHandle) { add(.cancelled, load) }
        func didReceiveInitialResponse(_ head: ResponseHead, for load: LoadHandle) {
            add(.initial(status: head.status, attempt: head.attempt), load)
        }
        func didReceiveDataChunk(_ chunk: [UInt8], for load: LoadHandle) { add(.chunk(chunk.count), load) }
        func willRetry(_ load: LoadHandle, attempt: Int, reason: String) { add(.retry(attempt), load) }

        /// Waits for `count` terminal callbacks (bounded).
        func waitForTerminals(_ count: Int, within limit: Duration) async -> Bool {
            let timer = Task {
                try? await Task.sleep(for: limit)
                terminals.continuation.finish()
            }
            defer { timer.cancel() }
            var seen = 0
            for await _ in terminals.stream {
                seen += 1
                if seen == count { return true }
            }
            return false
        }
    }

    static let body = String(repeating: "courier ", count: 2000)

    static func makeServer() throws -> RecordingServer {
        try RecordingServer { _, request in
            let line = request.requestLine
            if line.contains("/fail") { return RecordingServer.Reply(status: 500, body: "no") }
            if line.contains("/slow") { return RecordingServer.Reply(status: 200, body: "late", delay: .seconds(3)) }
            return RecordingServer.Reply(status: 200, body: body)
        }
    }

    static func makeMixService() throws -> DataLoaderService {
        try makeTestService("""
            version: 1
            authorisers:
              stuck: { plugin: test-token, timeout: 300ms, allow-plain-http: true, settings: { hang: "yes" } }
            services:
              api:
                hosts: [127.0.0.1]
                retry: { max-attempts: 1 }
                # 120 loads share 8 pooled connections, and a load waits for one within the connect timeout: on a
                # machine loaded enough (other processes at full speed on both cores) the queue drained in more
                # than the default 10 s and loads ended in `timeout`. This test is about terminal callbacks.
                timeouts: { connect: 60s }
              stuck:
                hosts: [localhost]
                authoriser: stuck
            """)
    }

    @Test func exactlyOneTerminalCallbackUnderARandomMixOfOutcomes() async throws {
        enum Kind: CaseIterable { case ok, chunks, errorStatus, invalidURL, refused, cancelled, loaderFreed, authoriserHangs }
        let server = try Self.makeServer()
        let closed = try ClosedPort()
        let service = try Self.makeMixService()
        let factory = service.makeFactory()
        let loader = factory.makeLoader()
        var doomed: DataLoader? = factory.makeLoader()
        let recorder = Recorder()

        var random = SplitMix64(seed: 0xC0_0121)
        var kinds = Kind.allCases  // every kind at least once
        while kinds.count < 120 { kinds.append(Kind.allCases[Int(random.next() % UInt64(Kind.allCases.count))]) }
        kinds.shuffle(using: &random)

        var expected: [LoadHandle: Kind] = [:]
        var cancellations: [(LoadHandle, Duration)] = []
        for (i, kind) in kinds.enumerated() {
            let handle: LoadHandle
            switch kind {
            case .ok:
                handle = loader.load(Request(url: server.url("/ok/\(i)")), delegate: recorder)
            case .chunks:
                handle = loader.load(Request(url: server.url("/ok/\(i)"), deliversChunks: true), delegate: recorder)
            case .errorStatus:
                handle = loader.load(Request(url: server.url("/fail/\(i)")), delegate: recorder)
            case .invalidURL:
                handle = loader.load(Request(url: "not a url \(i)"), delegate: recorder)
            case .refused:
                handle = loader.load(Request(url: "http://127.0.0.1:\(closed.port)/\(i)"), delegate: recorder)
            case .cancelled:
                handle = loader.load(Request(url: server.url("/slow/\(i)")), delegate: recorder)
                cancellations.append((handle, .milliseconds(Int64(random.next() % 80))))
            case .loaderFreed:
                handle = doomed!.load(Request(url: server.url("/slow/\(i)")), delegate: recorder)
            case .authoriserHangs:
                handle = loader.load(Request(url: "http://localhost:\(server.port)/\(i)"), delegate: recorder)
            }
            expected[handle] = kind
        }
        for (handle, delay) in cancellations.sorted(by: { $0.1 < $1.1 }) {
            Task {
                try? await Task.sleep(for: delay)
                handle.cancel()
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        doomed = nil

        let all = await recorder.waitForTerminals(kinds.count, within: .seconds(20))
        #expect(all, "not every request got a terminal callback")
        // Late duplicates would arrive after the slow responses (3 s) had they not been cancelled; wait a while.
        try await Task.sleep(for: .milliseconds(300))

        let log = recorder.log.withLock { $0 }
        #expect(log.count == kinds.count)
        for (handle, kind) in expected {
            let callbacks = log[handle] ?? []
            let terminals = callbacks.filter(\.isTerminal)
            #expect(terminals.count == 1, "\(kind) \(handle.request.url): \(callbacks)")
            #expect(callbacks.last?.isTerminal == true, "\(kind): a callback after the terminal one: \(callbacks)")
            guard let terminal = terminals.first else { continue }
            switch kind {
            case .ok:
                #expect(callbacks == [.initial(status: 200, attempt: 1), .success(status: 200, bodyBytes: Self.body.utf8.count)])
            case .chunks:
                let chunked = callbacks.compactMap { if case .chunk(let n) = $0 { n } else { nil } }.reduce(0, +)
                #expect(chunked == Self.body.utf8.count)
                #expect(callbacks.first == .initial(status: 200, attempt: 1))
                #expect(terminal == .success(status: 200, bodyBytes: 0))
            case .errorStatus:
                #expect(terminal == .errorResponse(status: 500, kind: "http-status"))
            case .invalidURL:
                #expect(callbacks == [.errorResponse(status: nil, kind: "policy")])
            case .refused:
                #expect(terminal == .errorResponse(status: nil, kind: "connect"))
            case .cancelled, .loaderFreed:
                #expect(callbacks == [.cancelled])
            case .authoriserHangs:
                #expect(callbacks == [.errorResponse(status: nil, kind: "timeout")])
            }
        }
        withExtendedLifetime(closed) {}
    }

    @Test func retriesReachTheDelegateWithTheAttemptNumber() async throws {
        let server = try RecordingServer { index, _ in index == 0 ? RecordingServer.Reply(status: 503) : RecordingServer.Reply(status: 200, body: "second") }
        let service = try makeTestService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { on: [503], backoff: { initial: 10ms, jitter: none } }
            """)
        let loader = service.makeFactory().makeLoader()
        let recorder = Recorder()
        let handle = loader.load(Request(url: server.url("/r")), delegate: recorder)
        #expect(await recorder.waitForTerminals(1, within: .seconds(10)))
        #expect(recorder.log.withLock { $0[handle] } == [.retry(2), .initial(status: 200, attempt: 2), .success(status: 200, bodyBytes: 6)])
    }

    @Test func aBodyOverTheLimitIsAnErrorNotACancellation() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 200, body: String(repeating: "x", count: 5000)) }
        let service = DataLoaderService(
            graph: try compile("version: 1\nservices:\n  api:\n    hosts: [127.0.0.1]\n"),
            configuration: .testing(userAgent: "t") { $0.maxBodyBytes = 1000 }
        )
        let loader = service.makeFactory().makeLoader()
        let recorder = Recorder()
        let handle = loader.load(Request(url: server.url("/big")), delegate: recorder)
        #expect(await recorder.waitForTerminals(1, within: .seconds(10)))
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.log.withLock { $0[handle] } == [.initial(status: 200, attempt: 1), .errorResponse(status: nil, kind: "body-too-large")])
    }
}

private func makeTestService(_ yaml: String) throws -> DataLoaderService { try makeService(yaml) }
