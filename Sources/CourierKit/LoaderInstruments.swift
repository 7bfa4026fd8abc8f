internal import CoreMetrics
internal import CourierCore
internal import Logging
internal import Tracing

/// A service's logger, metrics factory and tracer, as its ``DataLoaderService`` was given them. Each request gets
/// a ``RequestInstrumentation`` from it only when something would use one: with the no-op defaults (a logger above
/// `debug`, swift-metrics' no-op factory, the no-op tracer) a request costs no instrumentation work at all.
struct LoaderInstruments: Sendable {
    /// The dimension (and metadata) value for the service and endpoint of a host no service claims: the host is
    /// left out so that an app talking to many unclaimed hosts does not make a metric per host.
    static let unclaimed = "(defaults)"

    let logger: Logger
    /// nil for the no-op factory.
    let metrics: LoaderMetrics?
    /// nil for the no-op tracer.
    let tracer: (any Tracer)?

    init(logger: Logger, metricsFactory: any MetricsFactory, tracer: any Tracer) {
        self.logger = logger
        self.metrics = metricsFactory is NOOPMetricsHandler ? nil : LoaderMetrics(factory: metricsFactory)
        self.tracer = tracer is NoOpTracer ? nil : tracer
    }

    /// The instrumentation of request `number`, or nil when nothing would use it. `logger` is the request's own
    /// (``Request/logger``), if any. Reads the caller's trace context (the task-local `InstrumentationContext`), so it
    /// must be called on the task that asked for the load.
    /// `clock` is the service's: the instants the durations are measured between.
    func begin(
        request number: UInt64, url: String, method: HTTPMethod, logger requestLogger: Logger?, clock: LoaderClock = .system
    ) -> RequestInstrumentation? {
        let logger = requestLogger ?? self.logger
        let logs = logger.logLevel <= .debug
        guard logs || metrics != nil || tracer != nil else { return nil }
        return RequestInstrumentation(
            number: number, url: url, method: method, logger: logs ? logger : nil, metrics: metrics, tracer: tracer,
            parent: tracer == nil ? nil : InstrumentationContext.current ?? .topLevel, clock: clock
        )
    }
}
