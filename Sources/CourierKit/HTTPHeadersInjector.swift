internal import CourierCore
internal import Instrumentation

/// Writes what a tracer propagates (W3C `traceparent` and `tracestate` for an OpenTelemetry tracer) into a
/// request's header fields, replacing fields of the same name.
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}
