import BenchSupport
import CoreMetrics
import CourierCore
import CourierKit
import CourierTransport
import InMemoryTracing
import Logging
import MetricsTestKit
import Synchronization
import Tracing

/// The instruments of `courier-load --client loader`: the no-op defaults, or real in-memory backends
/// (`COURIER_INSTRUMENTS=memory`): swift-metrics' `TestMetrics`, swift-distributed-tracing's `InMemoryTracer`,
/// and a log handler that keeps lines in memory at `info`, the level a production service runs at (Courier logs
/// nothing above `debug`, so it asks the handler's level and logs nothing).
public enum LoaderBenchInstruments {
    /// A service's instruments.
    public enum Mode: Sendable, Equatable {
        /// The no-op defaults.
        case defaults
        /// Backends that record nothing but are not the no-op ones (``NullMetrics``, ``NullTracer``, a log handler
        /// at `info`): Courier does all of its instrumentation work, the backends none.
        case null
        /// The in-memory backends, or only those of `only` (`logs`, `metrics`, `tracing`; the others no-op), with
        /// the tracer's finished spans taken every 10 ms when `exported`.
        case memory(only: Set<String>? = nil, exported: Bool = false)

        /// The mode `COURIER_INSTRUMENTS`, `COURIER_INSTRUMENT_ONLY` and `COURIER_TRACE_EXPORT` ask for.
        public static var fromEnvironment: Mode {
            switch environment("COURIER_INSTRUMENTS") {
            case "null": .null
            case "memory":
                .memory(
                    only: environment("COURIER_INSTRUMENT_ONLY").map { Set($0.split(separator: ",").map(String.init)) },
                    exported: environment("COURIER_TRACE_EXPORT") != nil
                )
            default: .defaults
            }
        }
    }

    /// The benchmark's service configuration: no process environment, the given instruments.
    static func configuration(
        logger: Logger = HTTPClient.loggingDisabled, metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance,
        tracer: any Tracer = NoOpTracer()
    ) -> DataLoaderService.Configuration {
        var configuration = DataLoaderService.Configuration(userAgent: "courier-load/1")
        configuration.environment = [:]
        configuration.logger = logger
        configuration.metricsFactory = metricsFactory
        configuration.tracer = tracer
        return configuration
    }

    static func makeService(graph: PolicyGraph, client: HTTPClient, mode: Mode) -> DataLoaderService {
        switch mode {
        case .defaults:
            return DataLoaderService(graph: graph, configuration: configuration(), client: client)
        case .null:
            return DataLoaderService(
                graph: graph,
                configuration: configuration(
                    logger: Logger(label: "courier-load") { _ in MemoryLogHandler() }, metricsFactory: NullMetrics(), tracer: NullTracer()
                ),
                client: client
            )
        case .memory(let only, let exported):
            // Only the backends named in `only` are kept, the others no-op, to see each one's part.
            func keeps(_ backend: String) -> Bool { only?.contains(backend) ?? true }
            let tracer: any Tracer
            if keeps("tracing") {
                let inMemory = InMemoryTracer(recordInjections: false, recordExtractions: false)
                if exported { exportPeriodically(inMemory) }
                tracer = inMemory
            } else {
                tracer = NoOpTracer()
            }
            return DataLoaderService(
                graph: graph,
                configuration: configuration(
                    logger: keeps("logs") ? Logger(label: "courier-load") { _ in MemoryLogHandler() } : HTTPClient.loggingDisabled,
                    metricsFactory: keeps("metrics") ? TestMetrics() : NOOPMetricsHandler.instance,
                    tracer: tracer
                ),
                client: client
            )
        }
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
