import CoreMetrics
import Instrumentation
import Tracing

/// Backends that record nothing but are not the no-op ones Courier recognises, so Courier does all of its
/// instrumentation work (`COURIER_INSTRUMENTS=null`): what the instrumentation costs Courier itself, apart from
/// what a backend costs to record it.
final class NullMetrics: MetricsFactory, CounterHandler, FloatingPointCounterHandler, RecorderHandler, TimerHandler, MeterHandler {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { self }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler { self }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { self }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { self }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { self }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func increment(by: Int64) {}
    func increment(by: Double) {}
    func reset() {}
    func record(_ value: Int64) {}
    func record(_ value: Double) {}
    func recordNanoseconds(_ duration: Int64) {}
    func set(_ value: Int64) {}
    func set(_ value: Double) {}
    func decrement(by: Double) {}
}

/// A tracer whose spans keep nothing (one small object each). Public for tracer-bench.
public struct NullTracer: Tracer {
    public init() {}

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> NullSpan {
        NullSpan(context: context())
    }

    public func activeSpan(identifiedBy context: InstrumentationContext) -> NullSpan? { nil }
    public func forceFlush() {}
    public func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {}
    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}

public final class NullSpan: Span {
    public let context: InstrumentationContext
    init(context: InstrumentationContext) { self.context = context }
    public var operationName: String { get { "" } set {} }
    public var attributes: SpanAttributes { get { [:] } set {} }
    public var isRecording: Bool { true }
    public func setStatus(_ status: SpanStatus) {}
    public func addEvent(_ event: SpanEvent) {}
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
    public func addLink(_ link: SpanLink) {}
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {}
}
