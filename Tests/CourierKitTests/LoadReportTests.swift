import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing

/// `LoadReport`: what a load did, read from its response or its error, in the policy's words (a 401's refresh:
/// `LoaderBehaviourTests.a401RefreshesOnceAndRetries`; waits: `LoaderManualClockTests`).
@Suite(.timeLimit(.minutes(1))) struct LoadReportTests {
    @Test func attemptsThatFailWithoutAResponseAreInTheErrorsReport() async throws {
        let closed = try ClosedPort()
        let (loader, clock) = try makeClockedLoader("""
            version: 1
            services:
              api: { hosts: [127.0.0.1], scheme: http, retry: { max-attempts: 2, on: [connect-error], backoff: { initial: 2s, jitter: none } } }
            """)
        let loaded = Task { try await loader.load(Request(url: "http://127.0.0.1:\(closed.port)/x")) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: CourierError.self) { try await loaded.value }
        #expect(error?.kind == .connect)
        #expect(error?.report?.attempts.map(\.outcome) == [.error(.connect), .error(.connect)])
        #expect(error?.report?.waits == [.backoff(.seconds(2))])
    }

    @Test func aRedirectsHopsAreOneReport() async throws {
        let server = try RecordingServer { _, request in
            request.path == "/old" ? .init(status: 301, headers: [("Location", "/new")], body: "") : .init(body: "here")
        }
        let service = try makeService("""
            version: 1
            services:
              api: { hosts: [127.0.0.1], scheme: http }
            """)
        let response = try await service.makeFactory().makeLoader().load(Request(url: server.url("/old")))
        #expect(response.status == 200)
        #expect(response.report.attempts.map(\.outcome) == [.status(301), .status(200)])
        #expect(response.report == LoadReport(attempts: [.init(number: 1, outcome: .status(301)), .init(number: 1, outcome: .status(200))]))
    }

    @Test func aStoredAnswerMadeNoAttempt() async throws {
        let directory = NSTemporaryDirectory() + "courier-report-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "stored") }
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                services:
                  api: { hosts: [127.0.0.1], scheme: http, cache: { ttl: 5m } }
                """),
            configuration: .testing { $0.cacheDirectory = directory }
        )
        let loader = service.makeFactory().makeLoader()
        #expect(try await loader.load(Request(url: server.url("/c"))).report.attempts.map(\.outcome) == [.status(200)])
        let hit = try await loader.load(Request(url: server.url("/c")))
        #expect(hit.cache == .hit)
        #expect(hit.report == LoadReport())
    }
}
