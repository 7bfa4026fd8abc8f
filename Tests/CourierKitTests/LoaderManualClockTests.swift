import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing

/// A loader of a service with `yaml`'s policy on a new manual clock (and `change`'s configuration), for the tests
/// that advance the clock.
func makeClockedLoader(
    _ yaml: String, _ change: (inout DataLoaderService.Configuration) -> Void = { _ in }
) throws -> (DataLoader, ManualClock) {
    let clock = ManualClock()
    let service = DataLoaderService(
        graph: try compile(yaml),
        configuration: .testing {
            $0.clock = .manual(clock)
            change(&$0)
        }
    )
    return (service.makeFactory().makeLoader(), clock)
}

/// The loader on a `ManualClock`, against real loopback servers: every wait a policy makes it take (back-off,
/// Retry-After, rate limit, authoriser timeout, token expiry) happens on the clock the test advances, none in real
/// time, and the load's `LoadReport` says which waits it took and how each attempt ended.
///
/// The real-time bounds below are not speed checks: each is far under the virtual time the test advances through,
/// so it fails only if the loader waited for real.
@Suite(.timeLimit(.minutes(1))) struct LoaderManualClockTests {
    @Test func aThirtySecondBackOffOverThreeAttemptsTakesNoRealTime() async throws {
        let server = try RecordingServer { index, _ in index < 2 ? .init(status: 503, body: "busy") : .init(body: "ok") }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                timeouts: { total: 5m }
                retry: { max-attempts: 3, on: [503], backoff: { initial: 30s, max: 30s, multiplier: 1, jitter: none } }
            """
        )
        let started = ContinuousClock.now
        async let loaded = loader.load(Request(url: server.url("/busy")))
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(30))
        }
        let response = try await loaded
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(response.status == 200)
        #expect(response.report.attempts.map(\.outcome) == [.status(503), .status(503), .status(200)])
        #expect(response.report.attempts.map(\.number) == [1, 2, 3])
        #expect(response.report.waits == [.backoff(.seconds(30)), .backoff(.seconds(30))])
        #expect(response.timeline.backoffWait == .seconds(60))
        #expect(clock.elapsed == .seconds(60))
        #expect(server.requests.count == 3)
    }

    @Test func aRetryAfterOfTwoMinutesIsHonouredOnTheClockByThisLoadAndTheNext() async throws {
        let server = try RecordingServer { index, _ in
            index == 0 ? .init(status: 429, headers: [("Retry-After", "120")], body: "slow down") : .init(body: "ok")
        }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                timeouts: { total: 10m }
                retry: { max-attempts: 2, on: [429], backoff: { initial: 10ms, max: 10ms, jitter: none }, retry-after-cap: 5m }
            """
        )
        async let first = loader.load(Request(url: server.url("/api/a")))
        try await clock.waitForSleepers(1)
        // The endpoint key (host and first path segment) is paused: a second load to it waits for the same instant,
        // on the rate limit.
        async let second = loader.load(Request(url: server.url("/api/b")))
        try await clock.waitForSleepers(2)
        clock.advance(by: .seconds(119))
        #expect(clock.sleepers == 2)
        #expect(server.requests.count == 1)
        clock.advance(by: .seconds(1))
        let (one, two) = try await (first, second)
        #expect(one.report.attempts.map(\.outcome) == [.status(429), .status(200)])
        #expect(one.report.waits == [.retryAfter(.seconds(120))])
        #expect(one.retryAfter == .seconds(120))
        #expect(two.report.attempts.map(\.outcome) == [.status(200)])
        #expect(two.report.waits == [.rateLimit(.seconds(120))])
        #expect(server.requests.count == 3)
    }

    @Test func fiveLoadsAtOnePerSecondTakeFourVirtualSeconds() async throws {
        let server = try RecordingServer { _, _ in .init(body: "ok") }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                timeouts: { total: 1m }
                rate-limit: { requests-per-second: 1, burst: 1 }
            """
        )
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Response.self) { group in
            for n in 0..<5 { group.addTask { try await loader.load(Request(url: server.url("/api/n\(n)"))) } }
            try await clock.waitForSleepers(4)
            #expect(server.requests.count <= 1)
            // One second at a time: one more request goes out each time.
            for second in 1...4 {
                clock.advance(by: .seconds(1))
                #expect(clock.sleepers == 4 - second)
            }
            var waits: [Duration] = []
            for try await response in group {
                #expect(response.status == 200)
                waits.append(response.report.waited { if case .rateLimit = $0 { true } else { false } })
            }
            #expect(waits.sorted() == [.zero, .seconds(1), .seconds(2), .seconds(3), .seconds(4)])
        }
        #expect(clock.elapsed == .seconds(4))
        #expect(ContinuousClock.now - started < .seconds(4))
        #expect(server.requests.count == 5)
    }

    @Test func aTokenIsRefreshedWhenTheClockPassesItsExpiry() async throws {
        // Tokens live 120 s; the plugin refreshes 60 s before expiry (`refresh-before`'s default).
        let tokens = try RotatingTokenServer(expiresIn: 120, delay: .zero)
        let api = try RecordingServer { _, _ in .init(body: "ok") }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            authorisers:
              partner:
                plugin: oauth2-client-credentials
                allow-plain-http: true
                settings: { token-url: "\(tokens.url())", client-id: app, client-secret: "${env:CS}" }
            services:
              api: { hosts: [127.0.0.1], scheme: http, authoriser: partner, retry: { max-attempts: 1 } }
            """
        ) { $0.environment = ["CS": "secret"] }
        _ = try await loader.load(Request(url: api.url("/1")))
        clock.advance(by: .seconds(59))
        _ = try await loader.load(Request(url: api.url("/2")))
        #expect(tokens.clientCredentialGrants == 1)
        clock.advance(by: .seconds(2))
        _ = try await loader.load(Request(url: api.url("/3")))
        #expect(tokens.clientCredentialGrants == 2)
        let sent = api.requests.map { $0.header("authorization") ?? "" }
        #expect(sent.count == 3)
        #expect(sent[0] == sent[1])
        #expect(sent[2] != sent[1])
        #expect(sent[2].hasSuffix("-cc2"))
    }

    @Test func cancellingALoadAsleepOnTheClockEndsItAtOnce() async throws {
        let server = try RecordingServer { _, _ in .init(status: 503, body: "busy") }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                timeouts: { total: 5m }
                retry: { max-attempts: 3, on: [503], backoff: { initial: 30s, max: 30s, jitter: none } }
            """
        )
        // The caller's task cancelled, then the loader's own cancellation (its scope, not the task).
        let byTask = Task { try await loader.load(Request(url: server.url("/task"))) }
        try await clock.waitForSleepers(1)
        byTask.cancel()
        let taskError = await #expect(throws: CourierError.self) { try await byTask.value }
        #expect(taskError?.kind == .cancelled)
        #expect(taskError?.report?.attempts.map(\.outcome) == [.status(503)])
        #expect(taskError?.report?.waits == [.backoff(.seconds(30))])

        let byLoader = Task { try await loader.load(Request(url: server.url("/loader"))) }
        try await clock.waitForSleepers(1)
        loader.cancelAll()
        let loaderError = await #expect(throws: CourierError.self) { try await byLoader.value }
        #expect(loaderError?.kind == .cancelled)
        // Neither waited for the clock: it never moved, and nothing sleeps on it any more.
        #expect(clock.elapsed == .zero)
        #expect(clock.sleepers == 0)
        #expect(server.requests.count == 2)
    }

    @Test func anAuthoriserThatNeverAnswersTimesOutWhenTheClockPassesItsTimeout() async throws {
        let server = try RecordingServer { _, _ in .init(body: "ok") }
        let (loader, clock) = try makeClockedLoader(
            """
            version: 1
            authorisers:
              stuck: { plugin: test-token, timeout: 20s, allow-plain-http: true, settings: { hang: "yes" } }
            services:
              api: { hosts: [127.0.0.1], scheme: http, authoriser: stuck, timeouts: { total: 5m }, retry: { max-attempts: 1 } }
            """
        )
        let loaded = Task { try await loader.load(Request(url: server.url("/a"))) }
        try await clock.waitForSleepers(1, includingTimers: true)
        #expect(clock.sleepers == 0)
        #expect(clock.timers == 1)
        clock.advance(by: .seconds(20))
        let error = await #expect(throws: CourierError.self) { try await loaded.value }
        #expect(error?.kind == .timeout)
        #expect(server.requests.isEmpty)
    }
}

/// The clock on its own: sleepers wake in the order of their instants, a cancelled sleeper leaves at once, and
/// waiting for sleepers is bounded.
@Suite(.timeLimit(.minutes(1))) struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTheClockReachesTheirInstants() async throws {
        let clock = ManualClock()
        let origin = clock.deadline
        try await withThrowingTaskGroup(of: Int.self) { group in
            for (n, seconds) in [(3, 30), (1, 10), (2, 20)] {
                group.addTask {
                    try await LoaderClock.manual(clock).sleep(until: origin + .seconds(seconds))
                    return n
                }
            }
            try await clock.waitForSleepers(3)
            clock.advance(by: .seconds(15))
            #expect(try await group.next() == 1)
            #expect(clock.sleepers == 2)
            clock.advance(to: clock.now + .seconds(10))
            #expect(try await group.next() == 2)
            #expect(clock.sleepers == 1)
            clock.advance(to: clock.now + .seconds(100))
            #expect(try await group.next() == 3)
        }
        #expect(clock.elapsed == .seconds(125))
    }

    @Test func theWallClockMovesWithTheClock() {
        let clock = ManualClock(unixNanoseconds: 1_767_225_600 * 1_000_000_000)
        #expect(LoaderClock.manual(clock).wall.seconds == 1_767_225_600)
        clock.advance(by: .milliseconds(1500))
        #expect(clock.wallClock.now() == 1_767_225_601_500_000_000)
        // Backwards does nothing: the clock is monotonic.
        clock.advance(by: .seconds(-10))
        clock.advance(to: clock.now - .seconds(1))
        #expect(clock.elapsed == .milliseconds(1500))
    }

    @Test func waitingForSleepersThatNeverComeFailsWithATimeout() async {
        let clock = ManualClock()
        let error = await #expect(throws: CourierError.self) { try await clock.waitForSleepers(1, timeout: .milliseconds(50)) }
        #expect(error?.kind == .timeout)
    }
}
