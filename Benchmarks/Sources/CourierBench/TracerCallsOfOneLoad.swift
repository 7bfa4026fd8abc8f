import BenchSupport
import CourierCore
import CourierKit
import InMemoryTracing
import Instrumentation
import Tracing

/// The tracer calls Courier's `RequestInstrumentation` makes for a load answered on its first attempt, made
/// here without a loader: a client span for the load and a child client span for the attempt, the same
/// attributes, the attempt's trace context injected into the request's header fields, and the two ends.
/// `tracer-bench` makes them in a tight loop; `courier-load` makes them beside each request
/// (`COURIER_TRACER_BESIDE=1`, ``TracerBeside``). Keep it in step with `RequestInstrumentation`.
public enum TracerCallsOfOneLoad {
    /// Header fields as the loader's injector writes them.
    struct FieldsInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
            carrier.replaceOrAdd(name: key, value: value)
        }
    }

    /// Makes the calls on `tracer`; returns the header fields with the trace context. `updates` is how many
    /// times each span's attributes are handed over: 1 (when it ends, as Courier does) or 2 (also when it starts
    /// or is routed, as Courier did before session 12).
    @inline(never)
    public static func make(_ tracer: any Tracer, updates: Int = 1) -> HTTPHeaders {
        let url = "http://127.0.0.1:8080/small"
        func describe(extra: Int) -> [String: SpanAttribute] {
            var attributes = [String: SpanAttribute](minimumCapacity: 4 + extra)
            attributes["http.request.method"] = .string("GET")
            attributes["url.full"] = .string(url)
            attributes["server.address"] = .string("127.0.0.1")
            attributes["server.port"] = .int64(8080)
            return attributes
        }
        let load = tracer.startSpan("GET", context: ServiceContext.topLevel, ofKind: .client)
        var loadAttributes = describe(extra: 4)
        loadAttributes["courier.service"] = .string("bench")
        loadAttributes["courier.endpoint"] = .string("GET /small")
        if updates == 2 { load.attributes = SpanAttributes(loadAttributes) }
        let attempt = tracer.startSpan("GET", context: load.context, ofKind: .client)
        var attemptAttributes = describe(extra: 5)
        attemptAttributes["courier.attempt"] = .int64(1)
        attemptAttributes["courier.target"] = .string("127.0.0.1:8080")
        if updates == 2 { attempt.attributes = SpanAttributes(attemptAttributes) }
        var headers = HTTPHeaders([("Host", "127.0.0.1:8080"), ("User-Agent", "courier-load/1")])
        tracer.inject(attempt.context, into: &headers, using: FieldsInjector())
        attemptAttributes["http.response.status_code"] = .int64(200)
        attempt.attributes = SpanAttributes(attemptAttributes)
        attempt.end()
        loadAttributes["http.response.status_code"] = .int64(200)
        load.attributes = SpanAttributes(loadAttributes)
        load.end()
        return headers
    }
}

/// `COURIER_TRACER_BESIDE=1`: after each request, `courier-load` makes the tracer calls of one load
/// (``TracerCallsOfOneLoad``) on an `InMemoryTracer` that keeps its spans, as `COURIER_INSTRUMENTS=memory` does.
/// With `--client courier` that is what a loader costing nothing beyond the transport would cost with this
/// tracer: the floor of the instrumentation goal. With `--client loader` and the no-op defaults, it is the
/// tracer's own work beside a real load, apart from Courier's code that makes the calls.
enum TracerBeside {
    static let tracer: InMemoryTracer? = environment("COURIER_TRACER_BESIDE") == "1"
        ? InMemoryTracer(recordInjections: false, recordExtractions: false) : nil

    @inline(__always)
    static func afterRequest() {
        guard let tracer else { return }
        blackHole(TracerCallsOfOneLoad.make(tracer))
    }
}
