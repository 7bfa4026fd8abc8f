import CourierCache
import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The HTTP cache as a stage of the data loader (RFC 9111, a private cache), against a loopback server that
/// records what reaches it and a record store in a temporary directory. Staleness is made with the `Age` field
/// (a response 100 s old with `max-age=60` is stale by 40 s when it arrives), so no test waits for a clock.
@Suite(.timeLimit(.minutes(1))) struct LoaderCacheTests {
    /// A policy whose one service (127.0.0.1, plain http, one attempt) caches; `extra` adds lines to the service.
    static func policy(_ extra: String = "", attempts: Int = 1) -> String {
        """
        version: 1
        authorisers:
          bearer: { plugin: static-bearer, settings: { token: "secret-token" }, allow-plain-http: true }
        services:
          api:
            hosts: [127.0.0.1]
            scheme: http
            retry: { max-attempts: \(attempts), backoff: { initial: 1ms, max: 1ms } }
            cache: { ttl: 5m, max-size: 10MB }
        \(extra)
        """
    }

    /// A temporary cache directory, removed by the caller's `defer`.
    static func directory() -> String {
        NSTemporaryDirectory() + "courier-loader-cache-\(UUID().uuidString)"
    }

    static func service(_ yaml: String = policy(), directory: String) throws -> DataLoaderService {
        DataLoaderService(graph: try compile(yaml), configuration: .testing { $0.cacheDirectory = directory })
    }

    /// The cache events a service's trace reports, in order.
    final class CacheTrace: Sendable {
        let events = Mutex<[String]>([])
        init(_ service: DataLoaderService) {
            service.addTraceObserver { event in
                if case .cache(let e) = event.kind { self.events.withLock { $0.append(Self.name(e)) } }
            }
        }
        var all: [String] { events.withLock { $0 } }
        static func name(_ e: CacheEvent) -> String {
            switch e {
            case .hit: "hit"
            case .miss: "miss"
            case .revalidating: "revalidating"
            case .revalidated: "revalidated"
            case .stale(let why): "stale(\(why))"
            case .stored: "stored"
            case .notStored(let reason): "notStored(\(reason))"
            case .invalidated: "invalidated"
            case .failed: "failed"
            }
        }
    }

    @Test func aFreshResponseIsAnsweredFromTheCacheWithNoRequestAndNoWireBytes() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "answer \(index)") }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let consumed = Mutex<[Int64]>([])
        let statuses = Mutex<[Int?]>([])
        service.addConsumptionObserver { c in
            consumed.withLock { $0.append(c.bytesReceived) }
            statuses.withLock { $0.append(c.status) }
        }
        let loader = service.makeFactory().makeLoader()

        let first = try await loader.load(Request(url: server.url("/catalogue")))
        let second = try await loader.load(Request(url: server.url("/catalogue")))
        #expect(server.requests.count == 1)
        #expect(first.cache == .miss)
        #expect(second.cache == .hit)
        #expect(second.bodyText == "answer 0")
        #expect(second.status == 200)
        #expect(second.attempts == 0)
        #expect(second.bytesReceived == 0)
        #expect(second.headers["age"] != nil)
        #expect(trace.all == ["miss", "stored", "hit"])
        let bytes = consumed.withLock { $0 }
        #expect(bytes.count == 2 && bytes[0] > 0 && bytes[1] == 0)
        #expect(statuses.withLock { $0 } == [200, 200])
    }

    @Test func withoutExplicitFreshnessThePolicysTTLIsTheFreshness() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(body: "answer \(index)") }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/a")))
        let second = try await loader.load(Request(url: server.url("/a")))
        #expect(second.cache == .hit)
        #expect(server.requests.count == 1)
    }

    @Test func aStaleResponseIsRevalidatedAndA304FreshensIt() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, request in
            if request.header("If-None-Match") == "\"v1\"" {
                return .init(status: 304, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("X-Seen", "304")], body: "")
            }
            return .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100"), ("ETag", "\"v1\"")], body: "body \(index)")
        }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/doc")))
        let revalidated = try await loader.load(Request(url: server.url("/doc")))
        #expect(server.requests.count == 2)
        #expect(server.requests[1].header("If-None-Match") == "\"v1\"")
        #expect(revalidated.cache == .revalidated)
        #expect(revalidated.status == 200)
        #expect(revalidated.bodyText == "body 0")
        #expect(revalidated.headers["x-seen"] == "304")
        // Freshened: the 304's max-age=60 without an Age field makes it fresh again.
        let third = try await loader.load(Request(url: server.url("/doc")))
        #expect(third.cache == .hit)
        #expect(third.bodyText == "body 0")
        #expect(server.requests.count == 2)
        #expect(trace.all == ["miss", "stored", "revalidating", "revalidated", "hit"])
    }

    @Test func aStaleResponseWithLastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stamp = "Tue, 03 Nov 2026 10:00:00 GMT"
        let server = try RecordingServer { index, _ in
            .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100"), ("Last-Modified", stamp)], body: "v\(index)")
        }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/doc")))
        let second = try await loader.load(Request(url: server.url("/doc")))
        #expect(server.requests[1].header("If-Modified-Since") == stamp)
        // A 200 to the conditional request replaces the stored response.
        #expect(second.cache == .miss)
        #expect(second.bodyText == "v1")
    }

    @Test func noStoreIsNotStoredAndTheTraceSaysWhy() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "no-store")], body: "v\(index)") }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/private")))
        let second = try await loader.load(Request(url: server.url("/private")))
        #expect(second.bodyText == "v1")
        #expect(server.requests.count == 2)
        #expect(trace.all == ["miss", "notStored(the response has no-store)", "miss", "notStored(the response has no-store)"])
    }

    @Test func varyKeepsOneVariantPerValueOfTheVariedField() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, request in
            .init(headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: request.header("Accept-Language") ?? "none")
        }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        func load(_ language: String) async throws -> Response {
            var request = Request(url: server.url("/greeting"))
            request.headers.add(name: "Accept-Language", value: language)
            return try await loader.load(request)
        }
        #expect(try await load("de").bodyText == "de")
        #expect(try await load("en").bodyText == "en")
        let de = try await load("de")
        let en = try await load("en")
        #expect(de.bodyText == "de" && de.cache == .hit)
        #expect(en.bodyText == "en" && en.cache == .hit)
        #expect(server.requests.count == 2)
    }

    @Test(arguments: [HTTPMethod.post, .put, .delete, .patch])
    func anUnsafeMethodsResponseInvalidatesTheStoredResponseOfItsURL(_ method: HTTPMethod) async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/item")))
        var change = Request(url: server.url("/item"))
        change.method = method
        change.body = Array("x".utf8)
        _ = try await loader.load(change)
        let after = try await loader.load(Request(url: server.url("/item")))
        #expect(after.cache == .miss)
        #expect(after.bodyText == "v2")
        #expect(server.requests.count == 3)
        #expect(trace.all.contains("invalidated"))
    }

    @Test func staleIfErrorServesTheStoredResponseWhenTheOriginAnswers503() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in
            index == 0
                ? .init(headers: [("Cache-Control", "max-age=60, stale-if-error=600"), ("Age", "100")], body: "kept")
                : .init(status: 503, body: "down")
        }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/feed")))
        let answer = try await loader.load(Request(url: server.url("/feed")))
        #expect(answer.status == 200)
        #expect(answer.bodyText == "kept")
        #expect(answer.cache == .stale)
        #expect(server.requests.count == 2)
        #expect(trace.all.last == "stale(the origin failed (http-status) within stale-if-error)")
    }

    @Test func staleIfErrorServesTheStoredResponseWhenTheOriginIsUnreachable() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Connection: close, so that no pooled connection outlives the server's stop.
        let server = try RecordingServer { _, _ in
            .init(headers: [("Cache-Control", "max-age=60, stale-if-error=600"), ("Age", "100"), ("Connection", "close")], body: "kept")
        }
        let url = server.url("/feed")
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: url))
        server.stop()
        let answer = try await loader.load(Request(url: url))
        #expect(answer.bodyText == "kept")
        #expect(answer.cache == .stale)
    }

    @Test(arguments: ["must-revalidate", "no-cache"])
    func mustRevalidateAndNoCacheWinOverStaleIfError(_ directive: String) async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in
            index == 0
                ? .init(headers: [("Cache-Control", "max-age=60, \(directive), stale-if-error=600"), ("Age", "100")], body: "kept")
                : .init(status: 503, body: "down")
        }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/feed")))
        let answer = try await loader.load(Request(url: server.url("/feed")))
        #expect(answer.status == 503)
        #expect(answer.bodyText == "down")
        #expect(answer.cache == .miss)
    }

    @Test func anOfflineFactoryAnswersFromTheCacheFreshOrStaleAndFailsOnlyWhenNothingIsStored() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, request in
            request.path == "/fresh"
                ? .init(headers: [("Cache-Control", "max-age=60")], body: "fresh")
                : request.path == "/strict"
                    ? .init(headers: [("Cache-Control", "max-age=60, must-revalidate"), ("Age", "100")], body: "strict")
                    : .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100")], body: "stale")
        }
        let factory = try Self.service(directory: dir).makeFactory()
        let loader = factory.makeLoader()
        for path in ["/fresh", "/stale", "/strict"] { _ = try await loader.load(Request(url: server.url(path))) }
        factory.isOffline = true
        let fresh = try await loader.load(Request(url: server.url("/fresh")))
        let stale = try await loader.load(Request(url: server.url("/stale")))
        #expect(fresh.cache == .hit && fresh.bodyText == "fresh")
        #expect(stale.cache == .stale && stale.bodyText == "stale")
        for path in ["/strict", "/never-stored"] {
            await #expect(throws: CourierError.self) { try await loader.load(Request(url: server.url(path))) }
            do {
                _ = try await loader.load(Request(url: server.url(path)))
            } catch {
                #expect(error.kind == .offline)
            }
        }
        #expect(server.requests.count == 3)
    }

    @Test func aCachedBodyIsStreamedInChunksAndDelegatesGetIt() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let big = String(repeating: "0123456789abcdef", count: 20_000)  // 320,000 bytes
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: big) }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        // Streamed the first time too: the streamed body is kept and stored.
        var first: [UInt8] = []
        for try await event in loader.stream(Request(url: server.url("/big"))) {
            if case .chunk(let bytes) = event { first += bytes }
        }
        #expect(first.count == big.utf8.count)
        var chunks = 0
        var body: [UInt8] = []
        var status: Int?
        var final: Response?
        for try await event in loader.stream(Request(url: server.url("/big"))) {
            switch event {
            case .response(let head): status = head.status
            case .chunk(let bytes):
                chunks += 1
                body += bytes
            case .retrying, .resuming: Issue.record("a cached answer is not retried")
            case .finished(let response): final = response
            }
        }
        #expect(status == 200)
        #expect(chunks > 1)
        #expect(body == Array(big.utf8))
        #expect(final?.cache == .hit)
        #expect(server.requests.count == 1)
    }

    @Test func authorisedResponsesAreSharedOnlyBetweenFactoriesOfTheSameIdentity() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "public, max-age=60")], body: "v\(index)") }
        let service = try Self.service(Self.policy("    authoriser: bearer"), directory: dir)
        let alice = service.makeFactory(cacheIdentity: "alice").makeLoader()
        let bob = service.makeFactory(cacheIdentity: "bob").makeLoader()
        let anonymous = service.makeFactory().makeLoader()
        let aliceAgain = service.makeFactory(cacheIdentity: "alice").makeLoader()
        _ = try await alice.load(Request(url: server.url("/me")))
        let forBob = try await bob.load(Request(url: server.url("/me")))
        let forAnonymous = try await anonymous.load(Request(url: server.url("/me")))
        let forAlice = try await aliceAgain.load(Request(url: server.url("/me")))
        #expect(forBob.cache == .miss && forBob.bodyText == "v1")
        #expect(forAnonymous.cache == .miss && forAnonymous.bodyText == "v2")
        #expect(forAlice.cache == .hit && forAlice.bodyText == "v0")
        #expect(server.requests.count == 3)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRevalidatesInTheBackground() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, request in
            if request.header("If-None-Match") != nil {
                return .init(status: 304, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"e\"")], body: "")
            }
            return .init(headers: [("Cache-Control", "max-age=60, stale-while-revalidate=600"), ("Age", "100"), ("ETag", "\"e\"")], body: "v\(index)")
        }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/swr")))
        let stale = try await loader.load(Request(url: server.url("/swr")))
        #expect(stale.cache == .stale)
        #expect(stale.bodyText == "v0")
        // The background revalidation arrives (bounded wait), then the stored response is fresh.
        let until = ContinuousClock.now + .seconds(10)
        while server.requests.count < 2, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.header("If-None-Match") == "\"e\"")
        var fresh: Response?
        while ContinuousClock.now < until {
            fresh = try await loader.load(Request(url: server.url("/swr")))
            if fresh?.cache == .hit { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fresh?.cache == .hit)
        #expect(fresh?.bodyText == "v0")
    }

    @Test func onlyIfCachedWithNothingStoredIsA504AndNothingIsSent() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer()
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        var request = Request(url: server.url("/x"))
        request.headers.add(name: "Cache-Control", value: "only-if-cached")
        let answer = try await loader.load(request)
        #expect(answer.status == 504)
        #expect(server.requests.isEmpty)
    }

    @Test func aHEADIsAnsweredFromAStoredGETWithoutABody() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "the body") }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/h")))
        var head = Request(url: server.url("/h"))
        head.method = .head
        let answer = try await loader.load(head)
        #expect(answer.cache == .hit)
        #expect(answer.body.isEmpty)
        #expect(server.requests.count == 1)
    }

    @Test func anInvalidExpiresMeansAlreadyStale() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Expires", "0")], body: "v\(index)") }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/e")))
        let second = try await loader.load(Request(url: server.url("/e")))
        #expect(second.cache == .miss)
        #expect(second.bodyText == "v1")
    }

    @Test func anUnusableCacheDirectoryIsReportedAndLoadsGoOnWithoutIt() async throws {
        let file = Self.directory()
        #expect(FileManager.default.createFile(atPath: file, contents: Data("not a directory".utf8)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        let service = try Self.service(directory: file)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        let first = try await loader.load(Request(url: server.url("/a")))
        let second = try await loader.load(Request(url: server.url("/a")))
        #expect(first.bodyText == "v0" && second.bodyText == "v1")
        #expect(first.cache == nil)
        #expect(trace.all == ["failed", "failed"])
    }

    @Test func aCorruptRecordReadsAsMissingAndIsReplaced() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/c")))
        // Flip a byte in the middle of every record file.
        let files = FileManager.default.enumerator(atPath: dir)?.compactMap { $0 as? String } ?? []
        var corrupted = 0
        for relative in files {
            let path = dir + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                var bytes = FileManager.default.contents(atPath: path), bytes.count > 64
            else { continue }
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))
            corrupted += 1
        }
        #expect(corrupted >= 1)
        let second = try await loader.load(Request(url: server.url("/c")))
        #expect(second.cache == .miss)
        #expect(second.bodyText == "v1")
        let third = try await loader.load(Request(url: server.url("/c")))
        #expect(third.cache == .hit)
        #expect(third.bodyText == "v1")
    }

    @Test func concurrentLoadsOfACacheableURLAreOneMissAndTheOthersCoalesced() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "shared", delay: .milliseconds(300)) }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        let statuses = await withTaskGroup(of: CacheStatus?.self) { group in
            for _ in 0..<5 { group.addTask { try? await loader.load(Request(url: server.url("/co"))).cache } }
            var all: [CacheStatus?] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.filter { $0 == .miss }.count == 1)
        #expect(statuses.filter { $0 == .coalesced }.count == 4)
        #expect(server.requests.count == 1)
    }

    @Test func aServiceWithoutCacheInItsPolicyIsNotCachedEvenWithADirectory() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        let yaml = """
            version: 1
            services:
              api: { hosts: [127.0.0.1], scheme: http }
            """
        let loader = try Self.service(yaml, directory: dir).makeFactory().makeLoader()
        let first = try await loader.load(Request(url: server.url("/n")))
        let second = try await loader.load(Request(url: server.url("/n")))
        #expect(first.cache == nil && second.cache == nil)
        #expect(server.requests.count == 2)
    }

    @Test func aDelegateGetsACachedResponseAsHeadChunksAndOneTerminalCallback() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let big = String(repeating: "x", count: 150_000)
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: big) }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/d")))
        let recorder = LoaderDelegateTests.Recorder()
        var request = Request(url: server.url("/d"))
        request.deliversChunks = true
        let handle = loader.load(request, delegate: recorder)
        #expect(await recorder.waitForTerminals(1, within: .seconds(10)))
        let callbacks = recorder.log.withLock { $0[handle] ?? [] }
        #expect(callbacks.first == .initial(status: 200, attempt: 0))
        let chunks = callbacks.compactMap { callback -> Int? in
            if case .chunk(let n) = callback { return n }
            return nil
        }
        #expect(chunks.count > 1 && chunks.reduce(0, +) == 150_000)
        #expect(callbacks.filter(\.isTerminal) == [.success(status: 200, bodyBytes: 150_000)])
        #expect(server.requests.count == 1)
    }

    @Test func aHEADResponseWithMatchingValidatorsFreshensTheStoredGETResponse() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // GET: stale on arrival. HEAD: the server ignores conditions and answers 200, fresh, with the same ETag.
        let server = try RecordingServer { _, request in
            request.requestLine.hasPrefix("HEAD")
                ? .init(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"t\"")], body: "")
                : .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100"), ("ETag", "\"t\"")], body: "full body")
        }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/h")))
        var head = Request(url: server.url("/h"))
        head.method = .head
        let headAnswer = try await loader.load(head)
        #expect(headAnswer.cache == .miss)
        #expect(server.requests[1].header("If-None-Match") == "\"t\"")
        let get = try await loader.load(Request(url: server.url("/h")))
        #expect(get.cache == .hit)
        #expect(get.bodyText == "full body")
        #expect(server.requests.count == 2)
        #expect(trace.all == ["miss", "stored", "revalidating", "stored", "hit"])
    }

    /// A hit never suspends, so its request's task runs to its end inside `load` (Task.immediate) before the
    /// loader has recorded it: the tracker must still end up empty, with one outcome per load.
    @Test func hitsAnsweredWithoutSuspendingLeaveNoRequestTracked() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=600")], body: "same") }
        let factory = try Self.service(directory: dir).makeFactory()
        let loader = factory.makeLoader()
        _ = try await loader.load(Request(url: server.url("/t")))
        for _ in 0..<500 {
            #expect(try await loader.load(Request(url: server.url("/t"))).cache == .hit)
        }
        factory.isOffline = true
        for _ in 0..<500 {
            await #expect(throws: CourierError.self) { try await loader.load(Request(url: server.url("/never"))) }
        }
        #expect(loader.activeRequests == 0)
        #expect(server.requests.count == 1)
    }

    @Test func aBurstOfLoadsInTheStaleWhileRevalidateWindowSendsOneRevalidation() async throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The revalidation is slow, so the whole burst finds the response stale while it is under way.
        let server = try RecordingServer { _, request in
            if request.header("If-None-Match") != nil {
                return .init(status: 304, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"e\"")], body: "", delay: .milliseconds(500))
            }
            return .init(headers: [("Cache-Control", "max-age=60, stale-while-revalidate=600"), ("Age", "100"), ("ETag", "\"e\"")], body: "v")
        }
        let loader = try Self.service(directory: dir).makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/burst")))
        // One after another (concurrent ones would coalesce), all while the first revalidation is under way.
        var statuses: [CacheStatus?] = []
        for _ in 0..<20 { statuses.append(try await loader.load(Request(url: server.url("/burst"))).cache) }
        // Stale until the revalidation lands (a slow machine may see it land and get fresh hits after it).
        #expect(statuses.first == .stale && statuses.allSatisfy { $0 == .stale || $0 == .hit })
        let until = ContinuousClock.now + .seconds(10)
        while server.requests.count < 2, ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(700))
        #expect(server.requests.count == 2)
    }

    @Test func aRedirectHopIsCachedByItsOwnMethodNotTheCallers() async throws {
        // POST /form is answered 303 to /result: the hop is a GET, so its cacheable answer is stored, and a later
        // GET /result is a hit. Decided by the caller's method (POST), the hop would invalidate /result instead.
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try RecordingServer { _, request in
            request.path == "/form"
                ? .init(status: 303, headers: [("Location", "/result")], body: "")
                : .init(headers: [("Cache-Control", "max-age=60")], body: "result")
        }
        let service = try Self.service(directory: dir)
        let trace = CacheTrace(service)
        let loader = service.makeFactory().makeLoader()
        var post = Request(url: server.url("/form"))
        post.method = .post
        post.body = Array("a=1".utf8)
        let posted = try await loader.load(post)
        #expect(posted.status == 200)
        #expect(posted.body == Array("result".utf8))
        let again = try await loader.load(Request(url: server.url("/result")))
        #expect(again.cache == .hit)
        #expect(server.requests.map(\.path) == ["/form", "/result"])
        #expect(trace.all.contains("stored"))
    }
}
