import BenchSupport
import CoreMetrics
import CourierKit
import InMemoryTracing
import Logging
import MetricsTestKit
import Synchronization
import Tracing

/// The instruments of `courier-load --client loader`: the no-op defaults, or real in-memory backends
/// (`COURIER_INSTRUMENTS=memory`): swift-metrics' `TestMetrics`, swift-distributed-tracing's `InMemoryTracer`,
/// and a log handler that keeps lines in memory at `info`, the level a production service runs at (Courier logs
/// nothing above `debug`, so it asks the handler's level and logs nothing).
enum LoaderBenchInstruments {
    static func makeService(graph: PolicyGraph, client: HTTPClient, instrumented: Bool) -> DataLoaderService {
        guard instrumented else {
            return DataLoaderService(graph: graph, userAgent: "courier-load/1", environment: [:], client: client)
        }
        if environment("COURIER_INSTRUMENTS") == "null" {
            return DataLoaderService(
                graph: graph, userAgent: "courier-load/1", environment: [:], client: client,
                logger: Logger(label: "courier-load") { _ in MemoryLogHandler() }, metricsFactory: NullMetrics(), tracer: NullTracer()
            )
        }
        // COURIER_INSTRUMENT_ONLY=logs,metrics,tracing (any of them) keeps those backends and makes the others
        // no-op, to see each one's part.
        let only = environment("COURIER_INSTRUMENT_ONLY").map { Set($0.split(separator: ",").map(String.init)) }
        func keeps(_ backend: String) -> Bool { only?.contains(backend) ?? true }
        let tracer: any Tracer
        if keeps("tracing") {
            let inMemory = InMemoryTracer(recordInjections: false, recordExtractions: false)
            if environment("COURIER_TRACE_EXPORT") != nil { exportPeriodically(inMemory) }
            tracer = inMemory
        } else {
            tracer = NoOpTracer()
        }
        return DataLoaderService(
            graph: graph, userAgent: "courier-load/1", environment: [:], client: client,
            logger: keeps("logs") ? Logger(label: "courier-load") { _ in MemoryLogHandler() } : HTTPClient.loggingDisabled,
            metricsFactory: keeps("metrics") ? TestMetrics() : NOOPMetricsHandler.instance,
            tracer: tracer
        )
    }

    /// `COURIER_TRACE_EXPORT=1`: takes the tracer's finished spans every 10 ms, as an exporter would (a real
    /// tracer hands finished spans to its exporter and lets them go; `InMemoryTracer` otherwise keeps every one
    /// for the life of the process, 40,000–120,000 spans with their attributes over a run). The count taken is
    /// kept so the work cannot be optimised away.
    static let exportedSpans = Atomic<Int>(0)

    private static func exportPeriodically(_ tracer: InMemoryTracer) {
        Task.detached {
            while true {
                let spans = tracer.popFinishedSpans()
                exportedSpans.add(spans.count, ordering: .relaxed)
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}

/// Keeps log lines in memory.
private struct MemoryLogHandler: LogHandler {
    static let lines = Mutex<[String]>([])
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "\(event.level) \(event.message)"
        Self.lines.withLock { $0.append(line) }
    }
}
