import CourierCore
import CourierTestSupport
import CourierTransport
import Logging
import MetricsTestKit
import Testing

/// The client's background logger (connection events at `trace`) and connection gauges, against loopback peers.
/// Each test has its own logger and metrics factory: nothing global is bootstrapped.
@Suite(.timeLimit(.minutes(1))) struct HTTPClientObservabilityTests {
    private func gauge(_ metrics: TestMetrics, _ state: String) throws -> Double? {
        try metrics.expectGauge("courier_connections", [("state", state)]).lastValue
    }

    @Test func connectReuseAndIdleCloseAreLoggedAtTraceAndTheGaugesFollow() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let logs = CapturedLogs()
        let metrics = TestMetrics()
        var configuration = HTTPClientConfiguration()
        configuration.idleTimeout = .milliseconds(100)
        let client = HTTPClient(configuration: configuration, backgroundLogger: logs.logger(), metricsFactory: metrics)
        defer { client.shutdown() }

        _ = try await client.execute(HTTPRequest(url: HTTPURL(server.url("/one"))!))
        #expect(try gauge(metrics, "open") == 1)
        #expect(try gauge(metrics, "idle") == 1)
        #expect(try gauge(metrics, "leased") == 0)
        let second = try await client.execute(HTTPRequest(url: HTTPURL(server.url("/two"))!))
        #expect(second.metrics.reusedConnection)

        // The idle timer closes the connection; wait for its log line (the bound only catches a hang).
        for _ in 0..<500 where !logs.all.contains(where: { $0.message.hasPrefix("closing a connection idle") }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let messages = logs.all.map(\.message)
        #expect(messages.filter { $0 == "connected" }.count == 1)
        #expect(messages.filter { $0 == "reusing an idle connection" }.count == 1)
        #expect(messages.contains { $0.hasPrefix("closing a connection idle") })
        #expect(logs.all.allSatisfy { $0.level == .trace })
        #expect(logs.all.allSatisfy { $0.metadata["courier.pool"] == "http://127.0.0.1:\(server.port)" })
        #expect(try gauge(metrics, "open") == 0)
        #expect(try gauge(metrics, "idle") == 0)
        // While leased, the gauge said so.
        let leased = try metrics.expectGauge("courier_connections", [("state", "leased")]).values
        #expect(leased.contains(1))
    }

    @Test func aServerThatClosedAnIdleConnectionIsLoggedAsStale() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let logs = CapturedLogs()
        let client = HTTPClient(backgroundLogger: logs.logger())
        defer { client.shutdown() }
        _ = try await client.execute(HTTPRequest(url: HTTPURL(peer.url("/close-silently"))!))
        try await Task.sleep(for: .milliseconds(200))  // let the close arrive
        let response = try await client.execute(HTTPRequest(url: HTTPURL(peer.url("/bytes/10"))!))
        #expect(response.status == 200)
        // Noticed before reuse (the usual case) or by the failed reuse: either way it is a stale-connection line.
        #expect(logs.all.contains {
            $0.message.contains("closed by the server (stale)") || $0.message.hasPrefix("a reused connection had been closed")
        })
    }
}
