import CoreMetrics
import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import Synchronization
import Testing
import Tracing
import CourierAuthorisers
import CourierTransport

/// Logs, metrics and spans of the loader against loopback servers. Every test passes its own logger, metrics
/// factory and tracer to its service: nothing global is bootstrapped, so the tests run in parallel.
@Suite(.timeLimit(.minutes(1))) struct LoaderObservabilityTests {
    /// A service for `yaml` with the given instruments (a client of its own, which gets the logger and factory).
    private func service(
        _ yaml: String, environment: [String: String] = [:], logger: Logger = HTTPClient.loggingDisabled,
        metrics: TestMetrics? = nil, tracer: (any Tracer)? = nil
    ) throws -> DataLoaderService {
        DataLoaderService(
            graph: try compile(yaml),
            configuration: .testing {
                $0.environment = environment
                $0.logger = logger
                $0.metricsFactory = metrics ?? NOOPMetricsHandler.instance
                $0.tracer = tracer ?? NoOpTracer()
            }
        )
    }

    /// A service that retries a 503 at once (the tracing tests' server answers 503, then 200).
    private static let retriesA503 = """
        version: 1
        services:
          api:
            hosts: [127.0.0.1]
            scheme: http
            retry: { max-attempts: 3, on: [503], backoff: { initial: 1ms, jitter: none } }
        """

    // MARK: - Logging

    @Test func aBearerTokenIsNeverLoggedEvenAtTraceLevel() async throws {
        let token = "tok-5f1c9e0a7d-never-print-me"
        let server = try RecordingServer { index, _ in RecordingServer.Reply(status: index == 0 ? 503 : 200) }
        defer { server.stop() }
        let logs = CapturedLogs()
        let service = try service("""
            version: 1
            authorisers:
              bearer: { plugin: static-bearer, settings: { token: "${env:SECRET_TOKEN}" }, allow-plain-http: true }
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                authoriser: bearer
                retry: { max-attempts: 3, on: [503], backoff: { initial: 1ms, jitter: none } }
            """, environment: ["SECRET_TOKEN": token], logger: logs.logger(level: .trace))
        let loader = service.makeFactory().makeLoader()
        let response = try await loader.load(Request(url: server.url("/v1/items?api_key=query-secret-77&page=2")))
        #expect(response.status == 200)
        // The token was really sent, twice.
        #expect(server.requests.map { $0.header("authorization") } == ["Bearer \(token)", "Bearer \(token)"])

        let lines = logs.all
        #expect(lines.contains { $0.level == .trace && $0.message == "connected" }, "the client's background logger")
        #expect(lines.contains { $0.level == .debug && $0.message.hasPrefix("retrying in 1ms after 503") })
        #expect(lines.contains { $0.message == "load finished: status 200" && $0.metadata["courier.service"] == "api" })
        #expect(lines.allSatisfy { $0.level <= .debug }, "nothing above debug in normal operation")
        for line in lines {
            #expect(!line.description.contains(token), "\(line)")
            #expect(!line.description.contains("query-secret-77"), "\(line)")
        }
        let started = try #require(lines.first { $0.message == "load started" })
        #expect(started.metadata["url.full"] == server.url("/v1/items?api_key=REDACTED&page=2"))
    }

    @Test func aRequestsOwnLoggerGetsItsLinesWithItsMetadata() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let serviceLogs = CapturedLogs()
        let requestLogs = CapturedLogs()
        let service = try service("version: 1", logger: serviceLogs.logger(level: .debug))
        var request = Request(url: server.url("/x"))
        var logger = requestLogs.logger(level: .debug)
        logger[metadataKey: "app.request"] = "r-42"
        request.logger = logger
        _ = try await service.makeFactory().makeLoader().load(request)
        let finished = try #require(requestLogs.all.first { $0.message.hasPrefix("load finished") })
        #expect(finished.metadata["app.request"] == "r-42")
        #expect(finished.metadata["courier.service"] == nil, "an unclaimed host has no service")
        #expect(!serviceLogs.all.contains { $0.message.hasPrefix("load") })
    }

    // MARK: - Metrics

    @Test func aScriptedRunProducesExactlyTheseMetrics() async throws {
        let counts = Mutex<[String: Int]>([:])
        let server = try RecordingServer { _, request in
            let seen = counts.withLock { table -> Int in
                table[request.path, default: 0] += 1
                return table[request.path]!
            }
            switch request.path {
            case "/v1/flaky": return RecordingServer.Reply(status: seen == 1 ? 503 : 200, body: "flaky")
            case "/private/me": return RecordingServer.Reply(status: request.header("authorization") == "Bearer t0" ? 401 : 200)
            default: return RecordingServer.Reply(body: "ok")
            }
        }
        defer { server.stop() }
        let metrics = TestMetrics()
        let service = try service("""
            version: 1
            authorisers:
              metrics-tokens: { plugin: test-token, allow-plain-http: true }
            services:
              api:
                hosts: [127.0.0.1]
                scheme: http
                retry: { max-attempts: 3, on: [503], backoff: { initial: 1ms, jitter: none } }
                rate-limit: { endpoints: { /limited: { requests-per-second: 5, burst: 1 } } }
              private:
                hosts: [localhost]
                scheme: http
                authoriser: metrics-tokens
            """, metrics: metrics)
        let loader = service.makeFactory().makeLoader()

        #expect(try await loader.load(Request(url: server.url("/v1/flaky"))).status == 200)
        // Three at once through a limit of 5/s with a burst of 1: the first goes, the other two wait.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<3 {
                let url = server.url("/limited/\(i)")
                group.addTask { _ = try await loader.load(Request(url: url)) }
            }
            try await group.waitForAll()
        }
        #expect(try await loader.load(Request(url: server.localhostURL("/private/me"))).status == 200)

        let api = [("service", "api"), ("endpoint", "127.0.0.1/v1")]
        let limited = [("service", "api"), ("endpoint", "127.0.0.1/limited")]
        let tokens = [("service", "private"), ("endpoint", "localhost/private")]
        let get = ("method", "GET")
        func counter(_ label: String, _ dimensions: [(String, String)]) throws -> Int64 {
            try metrics.expectCounter(label, dimensions).totalValue
        }
        // 503 then 200: one request, two attempts, one retry for 503.
        #expect(try counter("courier_requests", api + [get, ("status_class", "2xx")]) == 1)
        #expect(try counter("courier_attempts", api + [get]) == 2)
        #expect(try counter("courier_retries", api + [("reason", "503")]) == 1)
        #expect(try metrics.expectTimer("courier_request_duration", api + [get, ("status_class", "2xx")]).values.count == 1)
        #expect(try metrics.expectTimer("courier_request_ttfb", api + [get]).values.count == 1)
        #expect(try counter("courier_bytes_received", api) > 2 * Int64("flaky".utf8.count))
        #expect(try counter("courier_bytes_sent", api) > 0)
        // The rate-limited endpoint: three requests, two waits, no retry.
        #expect(try counter("courier_requests", limited + [get, ("status_class", "2xx")]) == 3)
        #expect(try counter("courier_attempts", limited + [get]) == 3)
        #expect(try metrics.expectTimer("courier_rate_limit_wait", limited).values.count == 2)
        #expect(metrics.counters(label: "courier_retries").count == 1, "only the 503 was retried")
        // The 401: one refresh (started by this request), a second attempt, no back-off retry.
        #expect(try counter("courier_token_refreshes", [("service", "private"), ("authoriser", "metrics-tokens"), ("role", "started")]) == 1)
        #expect(try counter("courier_attempts", tokens + [get]) == 2)
        #expect(try counter("courier_requests", tokens + [get, ("status_class", "2xx")]) == 1)
        // Nothing else happened.
        #expect(metrics.counters(label: "courier_fallbacks").isEmpty)
        #expect(metrics.counters(label: "courier_retry_after_pauses").isEmpty)
        #expect(metrics.counterTotal(label: "courier_requests") == 5)
        // The service's own client reports its connections to the same factory.
        #expect(try metrics.expectGauge("courier_connections", [("state", "open")]).lastValue ?? 0 >= 1)
    }

    @Test func cacheMissesHitsAndRevalidationsAreCounted() async throws {
        let server = try RecordingServer { _, request in
            if request.header("if-none-match") == "\"v1\"" { return RecordingServer.Reply(status: 304, headers: [("ETag", "\"v1\"")], body: "") }
            return RecordingServer.Reply(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "cached")
        }
        defer { server.stop() }
        let directory = NSTemporaryDirectory() + "courier-obs-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let metrics = TestMetrics()
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                services:
                  api: { hosts: [127.0.0.1], scheme: http, cache: { ttl: 1m } }
                """),
            configuration: .testing {
                $0.registry = .standard
                $0.cacheDirectory = directory
                $0.metricsFactory = metrics
            }
        )
        let loader = service.makeFactory().makeLoader()
        #expect(try await loader.load(Request(url: server.url("/c"))).cache == .miss)
        #expect(try await loader.load(Request(url: server.url("/c"))).cache == .hit)
        var revalidate = Request(url: server.url("/c"))
        revalidate.headers.add(name: "Cache-Control", value: "no-cache")
        #expect(try await loader.load(revalidate).cache == .revalidated)
        let api = [("service", "api")]
        #expect(try metrics.expectCounter("courier_cache_misses", api).totalValue == 1)
        #expect(try metrics.expectCounter("courier_cache_hits", api).totalValue == 1)
        #expect(try metrics.expectCounter("courier_cache_revalidations", api).totalValue == 1)
        #expect(server.requests.count == 2)
    }

    // MARK: - Tracing

    @Test func aLoadIsAClientSpanWithAChildSpanPerAttempt() async throws {
        let server = try RecordingServer { index, _ in RecordingServer.Reply(status: index == 0 ? 503 : 200) }
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let service = try service(Self.retriesA503, tracer: tracer)
        let loader = service.makeFactory().makeLoader()
        let url = server.url("/v1/items?page=2&sig=abc")
        // The caller's span is the load span's parent.
        let status = try await tracer.withSpan("caller") { _ in try await loader.load(Request(url: url)).status }
        #expect(status == 200)

        let spans = tracer.finishedSpans
        let caller = try #require(spans.first { $0.operationName == "caller" })
        let load = try #require(spans.first { $0.parentSpanID == caller.spanID })
        let attempts = spans.filter { $0.parentSpanID == load.spanID }
        #expect(load.operationName == "GET")
        #expect(load.kind == .client)
        #expect(attempts.count == 2)
        #expect(attempts.allSatisfy { $0.kind == .client && $0.operationName == "GET" && $0.traceID == caller.traceID })

        let redacted = server.url("/v1/items?page=2&sig=REDACTED")
        #expect(load.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(load.attributes["url.full"]?.toSpanAttribute() == .string(redacted))
        #expect(load.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(load.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
        #expect(load.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(load.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(load.attributes["error.type"] == nil)
        #expect(load.events.map(\.name) == ["backoff"])

        let first = attempts[0], second = attempts[1]
        #expect(first.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(first.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(first.status?.code == .error)
        #expect(first.attributes["http.request.resend_count"] == nil)
        #expect(second.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(second.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(second.attributes["url.full"]?.toSpanAttribute() == .string(redacted))
        #expect(second.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(second.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.port)))
    }

    /// Each span's attributes reach it in one hand-over, just before it ends: a hand-over is a locked update in
    /// most tracers, and exporters read attributes only once a span has ended.
    @Test func eachSpanGetsItsAttributesOnceJustBeforeItEnds() async throws {
        let server = try RecordingServer { index, _ in RecordingServer.Reply(status: index == 0 ? 503 : 200) }
        defer { server.stop() }
        let recorder = InMemoryTracer()
        let tracer = HandOverTracer(inner: recorder)
        let service = try service(Self.retriesA503, tracer: tracer)
        let response = try await service.makeFactory().makeLoader().load(Request(url: server.url("/v1/items")))
        #expect(response.status == 200)

        let spans = recorder.finishedSpans
        #expect(spans.count == 3, "the load and its two attempts")
        for span in spans {
            #expect(tracer.calls(of: span.spanID) == ["attributes", "end"], "\(span.operationName) \(span.spanID)")
            #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
            #expect(span.attributes["http.response.status_code"] != nil)
        }
    }

    @Test func urlFullHasNoUserinfoAndNoQueryItemAnAuthoriserAdded() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let service = try service("""
            version: 1
            authorisers:
              key: { plugin: api-key, settings: { key: "k-secret-31", query-item: apitoken }, allow-plain-http: true }
            services:
              api: { hosts: [127.0.0.1], scheme: http, authoriser: key }
            """, tracer: tracer)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/v1/x?page=1")))
        #expect(server.requests.first?.path == "/v1/x?page=1&apitoken=k-secret-31")
        // A URL with userinfo is refused (a policy error), and its span does not repeat the credentials.
        let withUserinfo = "http://alice:pa55@127.0.0.1:\(server.port)/v1/y"
        await #expect(throws: CourierError.self) { _ = try await loader.load(Request(url: withUserinfo)) }

        let spans = tracer.finishedSpans
        let fullURLs = spans.compactMap { span -> String? in
            if case .string(let s)? = span.attributes["url.full"]?.toSpanAttribute() { return s }
            return nil
        }
        #expect(fullURLs.contains(server.url("/v1/x?page=1&apitoken=REDACTED")), "\(fullURLs)")
        #expect(fullURLs.contains(server.url("/v1/y")), "\(fullURLs)")
        #expect(!fullURLs.contains { $0.contains("k-secret-31") || $0.contains("alice") || $0.contains("pa55") })
        let failed = try #require(spans.first { $0.attributes["url.full"]?.toSpanAttribute() == .string(server.url("/v1/y")) })
        #expect(failed.attributes["error.type"]?.toSpanAttribute() == "policy")
    }

    @Test func traceContextGoesOnlyToHostsThePolicyAllows() async throws {
        // 127.0.0.1 is claimed (propagation on by default) and redirects /hop to localhost, which no service
        // claims; /quiet is on a service that switched propagation off.
        let server = try RecordingServer { _, request in
            if request.path == "/hop" {
                return RecordingServer.Reply(status: 302, headers: [("Location", "http://localhost:\(request.header("host")!.split(separator: ":").last!)/landed")])
            }
            return RecordingServer.Reply()
        }
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let service = try service("""
            version: 1
            services:
              api: { hosts: [127.0.0.1], scheme: http }
            """, tracer: tracer)
        let loader = service.makeFactory().makeLoader()
        _ = try await loader.load(Request(url: server.url("/allowed")))
        _ = try await loader.load(Request(url: server.localhostURL("/unclaimed")))
        _ = try await loader.load(Request(url: server.url("/hop")))

        let received = Dictionary(server.requests.map { ($0.path, $0) }) { a, _ in a }
        let traceKey = InMemoryTracer.traceIDKey, spanKey = InMemoryTracer.spanIDKey
        let allowed = try #require(received["/allowed"])
        let attempt = try #require(tracer.finishedSpans.first {
            $0.attributes["url.full"]?.toSpanAttribute() == .string(server.url("/allowed")) && $0.attributes["courier.attempt"] != nil
        })
        #expect(allowed.header(traceKey) == attempt.traceID)
        #expect(allowed.header(spanKey) == attempt.spanID, "the attempt span is the server's parent")
        #expect(received["/unclaimed"]?.header(traceKey) == nil)
        #expect(received["/unclaimed"]?.header(spanKey) == nil)
        #expect(received["/hop"]?.header(traceKey) != nil)
        #expect(received["/landed"] != nil)
        #expect(received["/landed"]?.header(traceKey) == nil, "never onto a hop to a host that does not allow it")
        // The hop is a resend of the load, to its own host.
        let hop = try #require(tracer.finishedSpans.first { $0.attributes["url.full"]?.toSpanAttribute() == .string(server.localhostURL("/landed")) })
        #expect(hop.attributes["server.address"]?.toSpanAttribute() == "localhost")
        #expect(hop.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
    }

    @Test func aServiceThatSwitchesPropagationOffGetsNoTraceContext() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let tracer = InMemoryTracer()
        let service = try service("""
            version: 1
            services:
              quiet: { hosts: [127.0.0.1], scheme: http, propagate-trace-context: false }
            """, tracer: tracer)
        _ = try await service.makeFactory().makeLoader().load(Request(url: server.url("/q")))
        #expect(server.requests.first?.header(InMemoryTracer.traceIDKey) == nil)
        #expect(tracer.finishedSpans.count == 2, "still traced: a load span and its attempt")
    }
}

/// Wraps `InMemoryTracer` to record, per span, the order of its attribute hand-overs and its end.
private struct HandOverTracer: Tracer {
    let inner: InMemoryTracer
    private let log = HandOverLog()

    init(inner: InMemoryTracer) { self.inner = inner }

    /// "attributes" and "end", in the order they reached the span with this id.
    func calls(of spanID: String) -> [String] { log.calls.withLock { $0[spanID] ?? [] } }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> HandOverSpan {
        let span = inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
        return HandOverSpan(inner: span, log: log)
    }

    func activeSpan(identifiedBy context: InstrumentationContext) -> HandOverSpan? { nil }
    func forceFlush() {}
    func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        inner.inject(context, into: &carrier, using: injector)
    }
    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        inner.extract(carrier, into: &context, using: extractor)
    }
}

private final class HandOverLog: Sendable {
    let calls = Mutex<[String: [String]]>([:])

    func record(_ call: String, _ spanID: String) { calls.withLock { $0[spanID, default: []].append(call) } }
}

private struct HandOverSpan: Span {
    let inner: InMemorySpan
    let log: HandOverLog

    var context: InstrumentationContext { inner.context }
    var operationName: String {
        get { inner.operationName }
        nonmutating set { inner.operationName = newValue }
    }
    var attributes: SpanAttributes {
        get { inner.attributes }
        nonmutating set {
            log.record("attributes", inner.spanID)
            inner.attributes = newValue
        }
    }
    var isRecording: Bool { inner.isRecording }
    func setStatus(_ status: SpanStatus) { inner.setStatus(status) }
    func addEvent(_ event: SpanEvent) { inner.addEvent(event) }
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        inner.recordError(error, attributes: attributes, at: instant())
    }
    func addLink(_ link: SpanLink) { inner.addLink(link) }
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        log.record("end", inner.spanID)
        inner.end(at: instant())
    }
}
