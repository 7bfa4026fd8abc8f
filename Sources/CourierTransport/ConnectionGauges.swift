internal import CoreMetrics

/// The pool's connection gauges, `courier_connections` with a `state` dimension (`open`, `idle`, `leased`),
/// recorded under the pool's lock after each change so that a backend sees them in order. Made only for a real
/// metrics factory: with the no-op default the pool holds none and does no work (docs/observability.md).
struct ConnectionGauges: Sendable {
    /// The gauge's name.
    static let label = "courier_connections"

    private let open: Gauge
    private let idle: Gauge
    private let leased: Gauge

    /// Gauges from `factory`, or nil for swift-metrics' no-op factory.
    init?(factory: any MetricsFactory) {
        if factory is NOOPMetricsHandler { return nil }
        open = Gauge(label: Self.label, dimensions: [("state", "open")], factory: factory)
        idle = Gauge(label: Self.label, dimensions: [("state", "idle")], factory: factory)
        leased = Gauge(label: Self.label, dimensions: [("state", "leased")], factory: factory)
    }

    /// Records established connections (`open`) and those parked unused (`idle`); the rest are leased.
    func record(open count: Int, idle parked: Int) {
        open.record(count)
        idle.record(parked)
        leased.record(count - parked)
    }
}
