import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Rate limits, Retry-After, retries, the retry budget and idempotency keys against loopback servers.
@Suite struct LoaderPolicyTests {
    @Test func theRateLimitPacesRequestsInsteadOfFailingThem() async throws {
        let server = try RecordingServer()
        let service = try makeService("""
            version: 1
            services:
              paced:
                hosts: [127.0.0.1]
                rate-limit: { requests-per-second: 10, burst: 1 }
            """)
        let loader = service.makeFactory().makeLoader()
        // 11 requests at 10/s with a burst of 1: the first goes at once, the last about 1 s later.
        var statuses: [Int] = []
        let seconds = try await elapsed {
            statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<11 {
                    let url = server.url("/v1/item/\(i)")
                    group.addTask { try await loader.load(Request(url: url)).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(statuses == Array(repeating: 200, count: 11))
        #expect(seconds >= 0.9, "11 requests at 10/s took \(seconds) s")
        #expect(seconds < 20, "11 requests at 10/s took \(seconds) s")  // only catches a hang
        #expect(server.requests.count == 11)
    }

    @Test func requestsOverTheLimitWaitAndArePaced() async throws {
        let server = try RecordingServer()
        let service = try makeService("""
            version: 1
            services:
              paced:
                hosts: [127.0.0.1]
                rate-limit: { requests-per-second: 10, burst: 1 }
            """)
        let loader = service.makeFactory().makeLoader()
        var tasks: [Task<Response, any Error>] = []
        for i in 0..<8 {
            let url = server.url("/q/\(i)")
            tasks.append(Task { try await loader.load(Request(url: url)) })
            try await Task.sleep(for: .milliseconds(30))
        }
        var responses: [Response] = []
        for task in tasks { responses.append(try await task.value) }
        // None fails: over the limit, requests wait. They are paced: the 8th admission comes at least seven
        // emission intervals (700 ms) after the first, and the first cannot be admitted before the earliest
        // request was queued, whatever order the scheduler ran the tasks in. (FIFO order of admission is the
        // rate limiter machine's own property, tested on it directly in CourierTransportTests.)
        #expect(responses.allSatisfy { $0.status == 200 })
        let firstQueued = try #require(responses.map(\.timeline.queued).min())
        let lastArrival = try #require(server.requests.map(\.received).max())
        #expect(lastArrival - firstQueued >= .milliseconds(690), "8 requests at 10/s, burst 1, spanned \(lastArrival - firstQueued)")
    }

    @Test func retryAfterInSecondsPausesTheEndpointAndDelaysTheRetry() async throws {
        let server = try RecordingServer { index, _ in
            index == 0 ? RecordingServer.Reply(status: 503, headers: [("Retry-After", "2")]) : RecordingServer.Reply(status: 200)
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { max-attempts: 3, on: [503], backoff: { initial: 10ms, jitter: none } }
            """)
        // The trace says when the endpoint is paused; the test then sends another request at once. (Waiting for
        // the event rather than sleeping a fixed time: CI machines are small and shared.) The `.retrying` event
        // comes after the pause is in place; `.retryAfter` comes just before it, and a test woken by it could look
        // for the pause too early.
        let paused = AsyncStream<Void>.makeStream()
        service.addTraceObserver { event in
            if case .retrying = event.kind { paused.continuation.yield() }
        }
        let loader = service.makeFactory().makeLoader()
        let start = ContinuousClock.now
        let first = Task { try await loader.load(Request(url: server.url("/v1/a"))) }
        // Another request to the same endpoint key while it is paused waits for the pause too.
        let key = EndpointKey(host: "127.0.0.1", pathPrefix: "/v1")
        var events = paused.stream.makeAsyncIterator()
        _ = await events.next()
        let pausedUntil = try #require(service.pausedUntil(key))
        let other = try await loader.load(Request(url: server.url("/v1/b")))
        #expect(other.status == 200)
        #expect(ContinuousClock.now >= pausedUntil, "the second request went before the pause ended")
        #expect(other.timeline.rateLimitWait > .zero)
        let r = try await first.value
        let seconds = (ContinuousClock.now - start).seconds
        #expect(r.status == 200)
        #expect(r.attempts == 2)
        #expect(r.retryAfter == .seconds(2))
        #expect(seconds >= 1.95 && seconds < 20, "took \(seconds) s")
    }

    @Test func retryAfterAsAnHTTPDateIsHonouredAndAHostileValueIsCapped() async throws {
        // The date is written when the answer is sent, a minute ahead: far more than the 500 ms cap however long
        // the client (or a busy machine) takes to read it.
        let server = try RecordingServer { index, request in
            if request.requestLine.contains("/date"), index == 0 {
                return RecordingServer.Reply(status: 429, headers: [("Retry-After", Self.imfFixdate(Date().timeIntervalSince1970 + 60))])
            }
            if request.requestLine.contains("/hostile"), index == 2 { return RecordingServer.Reply(status: 429, headers: [("Retry-After", "86400")]) }
            return RecordingServer.Reply(status: 200)
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { max-attempts: 2, on: [429], backoff: { initial: 10ms, jitter: none }, retry-after-cap: 500ms }
            """)
        let loader = service.makeFactory().makeLoader()
        // The cap of 500 ms applies to a date too.
        var response: Response?
        var seconds = try await elapsed { response = try await loader.load(Request(url: server.url("/date"))) }
        #expect(response?.status == 200)
        #expect(response?.retryAfter == .milliseconds(500))
        #expect(seconds >= 0.45 && seconds < 20, "took \(seconds) s")

        // A day-long Retry-After is capped at 500 ms instead of parking the client.
        seconds = try await elapsed { response = try await loader.load(Request(url: server.url("/hostile"))) }
        #expect(response?.status == 200)
        #expect(response?.attempts == 2)
        #expect(response?.retryAfter == .milliseconds(500))
        #expect(seconds >= 0.45 && seconds < 20, "took \(seconds) s")
    }

    @Test func retryAfterDateWithoutCapWaitsForTheDate() async throws {
        // Written when the answer is sent: 5 s ahead, 4 to 5 s once truncated to whole seconds. The server notes
        // when it wrote the date and which date it wrote, so that what the loader made of it can be checked exactly.
        let written = Mutex<(at: Double, date: Double)?>(nil)
        let server = try RecordingServer { index, _ in
            guard index == 0 else { return RecordingServer.Reply(status: 200) }
            let now = Date().timeIntervalSince1970
            let date = (now + 5).rounded(.down)
            written.withLock { $0 = (now, date) }
            return RecordingServer.Reply(status: 503, headers: [("Retry-After", Self.imfFixdate(date))])
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { max-attempts: 2, on: [503], backoff: { initial: 10ms, jitter: none } }
            """)
        let loader = service.makeFactory().makeLoader()
        var response: Response?
        let seconds = try await elapsed { response = try await loader.load(Request(url: server.url("/x"))) }
        let finished = Date().timeIntervalSince1970
        #expect(response?.status == 200)
        // The loader read the answer after the server wrote it and before the load returned: what it asked for is
        // what was left of the date at some moment in between, and it waited for that, not for its back-off (10 ms).
        let asked = try #require(response?.retryAfter).seconds
        let (writtenAt, date) = try #require(written.withLock { $0 })
        #expect(asked <= date - writtenAt + 0.001 && asked >= date - finished - 0.001, "asked \(asked) s of \(date - writtenAt) s")
        #expect(asked > 0, "the date was at least 4 s ahead when written, yet already past when read")
        #expect(seconds >= asked - 0.05 && seconds < 20, "took \(seconds) s for a Retry-After of \(asked) s")
    }

    @Test func retriesFollowTheConditionsAndMethodsWithGrowingBackoff() async throws {
        let server = try RecordingServer { _, request in
            request.requestLine.contains("/fatal") ? RecordingServer.Reply(status: 500) : RecordingServer.Reply(status: 503)
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry:
                  max-attempts: 3
                  on: [503]
                  methods: [GET, POST]
                  backoff: { initial: 100ms, multiplier: 2, jitter: none }
                  budget: { ratio: 1, min-per-second: 100 }
            """)
        let loader = service.makeFactory().makeLoader()
        // GET on 503: three attempts with 100 ms then 200 ms between them; the last answer is returned.
        var response: Response?
        let seconds = try await elapsed { response = try await loader.load(Request(url: server.url("/a"))) }
        #expect(response?.status == 503)
        #expect(response?.attempts == 3)
        #expect(response.map { $0.timeline.backoffWait >= .milliseconds(290) } == true)
        #expect(seconds >= 0.29 && seconds < 20)  // the upper bound only catches a hang
        #expect(server.requests.count == 3)

        // 500 is not a retry condition.
        let fatal = try await loader.load(Request(url: server.url("/fatal")))
        #expect(fatal.attempts == 1 && fatal.status == 500)
        #expect(server.requests.count == 4)

        // POST is listed but not idempotent and the route has no idempotency key: no retry.
        let post = try await loader.load(Request(url: server.url("/a"), method: .post, body: Array("x".utf8)))
        #expect(post.attempts == 1)
        #expect(server.requests.count == 5)

        // A per-request override of max attempts.
        let once = try await loader.load(Request(url: server.url("/a"), maxAttempts: 1))
        #expect(once.attempts == 1)
        #expect(server.requests.count == 6)
    }

    @Test func connectFailuresAreRetriedAndThenThrown() async throws {
        let closed = try ClosedPort()
        let port = closed.port
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry: { max-attempts: 2, on: [connect-error], backoff: { initial: 10ms, jitter: none } }
            """)
        let loader = service.makeFactory().makeLoader()
        do {
            _ = try await loader.load(Request(url: "http://127.0.0.1:\(port)/x"))
            Issue.record("a closed port answered")
        } catch {
            #expect(error.kind == .connect)
            // The error carries the whole request's attempts; a refused connect sends nothing.
            #expect(error.attempts == 2)
            #expect(error.bytesSent == 0)
        }
        withExtendedLifetime(closed) {}
    }

    @Test func theRetryBudgetCapsRetriesUnderAFailingServer() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 503) }
        // ratio 0 and 0.1 retries a second over the 10 s window: one retry in all.
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry:
                  max-attempts: 3
                  on: [503]
                  backoff: { initial: 1ms, jitter: none }
                  budget: { ratio: 0, min-per-second: 0.1 }
            """)
        let loader = service.makeFactory().makeLoader()
        var attempts: [Int] = []
        for i in 0..<6 { attempts.append(try await loader.load(Request(url: server.url("/\(i)"))).attempts) }
        #expect(attempts.reduce(0, +) == 7, "attempts per request: \(attempts)")
        #expect(server.requests.count == 7)
    }

    @Test func aNonIdempotentRequestIsRetriedWithOneIdempotencyKey() async throws {
        let server = try RecordingServer { index, _ in index < 2 ? RecordingServer.Reply(status: 503) : RecordingServer.Reply(status: 201) }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry:
                  max-attempts: 3
                  on: [503]
                  methods: [POST]
                  idempotency-key: Idempotency-Key
                  backoff: { initial: 10ms, jitter: full }
            """)
        let loader = service.makeFactory().makeLoader()
        let response = try await loader.load(Request(url: server.url("/orders"), method: .post, body: Array("{}".utf8)))
        #expect(response.status == 201)
        #expect(response.attempts == 3)
        let keys = server.requests.map { $0.header("Idempotency-Key") }
        #expect(keys.count == 3)
        let key = try #require(keys[0])
        #expect(key.count == 32)
        #expect(keys.allSatisfy { $0 == key })
        #expect(server.requests.allSatisfy { $0.body == Array("{}".utf8) })

        // A second request gets its own key.
        _ = try await loader.load(Request(url: server.url("/orders"), method: .post, body: Array("{}".utf8)))
        #expect(server.requests.last?.header("Idempotency-Key") != key)
    }

    static func imfFixdate(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }
}

/// Each jitter curve as the loader draws it against a failing loopback server: the delays it plans (from its
/// trace) stay within the curve's bounds and grow from retry to retry, and the server sees the attempts at
/// least that far apart.
@Suite struct LoaderJitterTests {
    @Test(arguments: ["none", "full", "equal", "decorrelated"])
    func eachJitterCurveKeepsItsBoundsAndGrows(_ jitter: String) async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 503) }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                retry:
                  max-attempts: 5
                  on: [503]
                  backoff: { initial: 20ms, multiplier: 2, max: 120ms, jitter: \(jitter) }
                  budget: { ratio: 1, min-per-second: 1000 }
            """)
        let planned = Mutex<[String: [Double]]>([:])
        service.addTraceObserver { event in
            if case .retrying(_, let delay) = event.kind {
                planned.withLock { $0[event.url, default: []].append(delay.seconds) }
            }
        }
        let loader = service.makeFactory().makeLoader()
        let samples = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<samples {
                group.addTask {
                    let response = try await loader.load(Request(url: server.url("/j/\(i)")))
                    #expect(response.status == 503 && response.attempts == 5)
                }
            }
            try await group.waitForAll()
        }

        let base = [0.020, 0.040, 0.080, 0.120]  // initial × 2^(n-1), capped at max
        let plans = planned.withLock { $0 }
        #expect(plans.count == samples)
        for (url, delays) in plans {
            #expect(delays.count == 4, "\(url): \(delays)")
            for (n, d) in delays.enumerated() {
                let ms = 0.0005  // rounding slack
                switch jitter {
                case "none": #expect(abs(d - base[n]) < ms, "retry \(n + 1): \(d)")
                case "full": #expect(d >= 0 && d <= base[n] + ms, "retry \(n + 1): \(d)")
                case "equal": #expect(d >= base[n] / 2 - ms && d <= base[n] + ms, "retry \(n + 1): \(d)")
                default:
                    let previous = n == 0 ? 0.020 : delays[n - 1]
                    #expect(d >= 0.020 - ms && d <= min(0.120, 3 * previous) + ms, "retry \(n + 1): \(d) after \(previous)")
                }
            }
            // The server saw each retry no sooner than its planned delay.
            let arrivals = server.requests.filter { $0.requestLine.contains(url.dropFirst(url.count - 4)) }.map(\.received)
            if arrivals.count == 5 {
                for n in 0..<4 {
                    #expect((arrivals[n + 1] - arrivals[n]).seconds >= delays[n] - 0.002)
                }
            }
        }
        // Growth: over the samples the later retries wait longer than the first, for every curve.
        let first = plans.values.map { $0[0] }.reduce(0, +) / Double(samples)
        let last = plans.values.map { $0[3] }.reduce(0, +) / Double(samples)
        // (Decorrelated jitter grows from the previous draw and is capped early, so it is only asked to grow.)
        let factor = jitter == "decorrelated" ? 1.0 : 1.5
        #expect(last > first * factor, "mean first delay \(first) s, mean fourth \(last) s")
    }
}
