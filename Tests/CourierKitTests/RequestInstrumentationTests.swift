import CoreMetrics
import CourierCore
@testable import CourierKit
import MetricsTestKit
import Testing
import Tracing
import CourierTransport

/// The instrumentation fed events directly: the cache events the loader will emit once the HTTP cache is wired
/// in, and the URL redaction rules.
@Suite struct RequestInstrumentationTests {
    @Test func cacheEventsBecomeHitMissAndRevalidationCounters() throws {
        let metrics = TestMetrics()
        let instruments = LoaderInstruments(logger: HTTPClient.loggingDisabled, metricsFactory: metrics, tracer: NoOpTracer())
        let url = "https://api.example.com/v1/x"
        let graph = try compile("""
            version: 1
            services:
              api: { hosts: [api.example.com], cache: { ttl: 1m } }
            """)
        let route = try #require(graph.route(for: url))
        let instrumentation = try #require(instruments.begin(request: 1, url: url, method: .get, logger: nil))
        instrumentation.routed(route, url: try #require(HTTPURL(url)))
        let events: [CacheEvent] = [.miss, .stored, .hit, .hit, .revalidating, .revalidated, .stale(why: .maxStale), .notStored(reason: "no-store")]
        for event in events {
            instrumentation.handle(LoaderEvent(request: 1, url: url, attempt: 0, at: .now, kind: .cache(event)))
        }
        let api = [("service", "api")]
        #expect(try metrics.expectCounter("courier_cache_hits", api).totalValue == 2)
        #expect(try metrics.expectCounter("courier_cache_misses", api).totalValue == 1)
        #expect(try metrics.expectCounter("courier_cache_revalidations", api).totalValue == 1)
        #expect(try metrics.expectCounter("courier_cache_stale_hits", api).totalValue == 1)
    }

    @Test func nothingIsInstrumentedWithTheNoOpDefaults() {
        let instruments = LoaderInstruments(
            logger: HTTPClient.loggingDisabled, metricsFactory: NOOPMetricsHandler.instance, tracer: NoOpTracer()
        )
        #expect(instruments.begin(request: 1, url: "http://a/", method: .get, logger: nil) == nil)
    }

    @Test func urlFullDropsUserinfoFragmentAndQuerySecrets() {
        #expect(TelemetryURL.full("https://u:p@api.example.com:8443/a?b=1#frag") == "https://api.example.com:8443/a?b=1")
        #expect(TelemetryURL.full("https://api.example.com/a?Signature=x&page=2&X-Goog-Signature=y&token=t&flag")
            == "https://api.example.com/a?Signature=REDACTED&page=2&X-Goog-Signature=REDACTED&token=REDACTED&flag")
        #expect(TelemetryURL.full("https://h/a?mine=s&page=1", redacting: ["mine"]) == "https://h/a?mine=REDACTED&page=1")
        #expect(TelemetryURL.full("https://h/path@with-at?x=1") == "https://h/path@with-at?x=1", "an @ in the path is not userinfo")
        #expect(TelemetryURL.addedNames(sent: "page=1&Key=abc&sig2=z", original: "page=1&sig2=old") == ["key", "sig2"])
    }
}
