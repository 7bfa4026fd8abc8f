import InMemoryTracing
import Tracing

/// A tracer that keeps its spans in memory (swift-distributed-tracing's `InMemoryTracer`, with W3C-shaped
/// identifiers) and propagates them as W3C `traceparent`, as an OpenTelemetry tracer would. A real app bootstraps
/// swift-otel's tracer instead; Courier does not know the difference.
struct W3CTracer: Tracer {
    let recorder = InMemoryTracer(idGenerator: .init(nextTraceID: { randomHex(bytes: 16) }, nextSpanID: { randomHex(bytes: 8) }))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: InstrumentationContext) -> InMemorySpan? {
        recorder.activeSpan(identifiedBy: context)
    }

    func forceFlush() {}

    /// `traceparent: 00-<trace id>-<span id>-01` (version 0, sampled).
    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {}
}

/// `bytes` random bytes as lower-case hex.
private func randomHex(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef")
    return String((0..<bytes * 2).map { _ in digits[Int(generator.next() as UInt8) & 0xF] })
}
