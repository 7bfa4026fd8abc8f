import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The wall clock of the service's one clock (`Configuration.clock`) is what the cache and Retry-After dates read:
/// a test that advances a manual clock moves them, with no sleep.
@Suite(.timeLimit(.minutes(1))) struct LoaderWallClockTests {
    /// A manual clock starting at a fixed date (2026-01-01 00:00:00 UTC).
    static func movableClock() -> ManualClock { ManualClock(unixNanoseconds: 1_767_225_600 * 1_000_000_000) }

    @Test func aCachedResponseGoesStaleWhenTheServicesClockMovesPastItsLifetime() async throws {
        let directory = NSTemporaryDirectory() + "courier-wall-clock-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try RecordingServer { index, _ in
            .init(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v\(index)\"")], body: "answer \(index)")
        }
        let time = Self.movableClock()
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                services:
                  api: { hosts: [127.0.0.1], scheme: http, retry: { max-attempts: 1 }, cache: { ttl: 5m } }
                """),
            configuration: .testing {
                $0.cacheDirectory = directory
                $0.clock = .manual(time)
            }
        )
        let loader = service.makeFactory().makeLoader()
        #expect(try await loader.load(Request(url: server.url("/c"))).cache == .miss)
        // 59 s later by the service's clock (no time passes for real): still fresh.
        time.advance(by: .seconds(59))
        #expect(try await loader.load(Request(url: server.url("/c"))).cache == .hit)
        #expect(server.requests.count == 1)
        // Past max-age: stale, so it is revalidated with the stored validator.
        time.advance(by: .seconds(2))
        let third = try await loader.load(Request(url: server.url("/c")))
        #expect(third.cache != .hit)
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.header("if-none-match") == "\"v0\"")
    }

    @Test func aRetryAfterDateIsReadAgainstTheServicesClock() async throws {
        let time = Self.movableClock()
        // The server asks for a pause until 1 s after the service's "now", as an HTTP-date; were the date read
        // against the real clock (months away from 2026-01-01), it would lie in the past: no pause at all.
        let date = HTTPDate.format(Double(1_767_225_600 + 1))
        let server = try RecordingServer { index, _ in
            index == 0 ? .init(status: 503, headers: [("Retry-After", date)], body: "busy") : .init(body: "ok")
        }
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                services:
                  api:
                    hosts: [127.0.0.1]
                    scheme: http
                    retry: { max-attempts: 2, on: [503], backoff: { initial: 1ms, max: 1ms }, retry-after-cap: 10s }
                """),
            configuration: .testing { $0.clock = .manual(time) }
        )
        let loader = service.makeFactory().makeLoader()
        async let loaded = loader.load(Request(url: server.url("/busy")))
        // The pause is taken on the same clock: the load sleeps until the test advances it past the date.
        try await time.waitForSleepers(1)
        time.advance(by: .seconds(1))
        let response = try await loaded
        #expect(response.status == 200)
        #expect(response.retryAfter == .seconds(1))
        #expect(response.report.waits == [.retryAfter(.seconds(1))])
    }
}
