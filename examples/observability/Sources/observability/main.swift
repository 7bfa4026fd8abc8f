// observability URL
//
// What a server team sees of Courier through its own observability stack. The app bootstraps a console log
// handler, an in-process metrics backend and a tracer (Courier, a library, never does), and gives what they hold
// to its DataLoaderService. It then loads URL three times, inside one span of its own, through a policy that
// claims URL's host with trace propagation on, and prints the log lines (as they happen), the spans and the
// metrics. The server at URL receives a W3C traceparent with each request.
import CourierCore
import CourierKit
import CourierPolicy
import Foundation
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import Tracing

let arguments = CommandLine.arguments
guard arguments.count == 2, let url = HTTPURL(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: observability URL (an absolute http or https URL)\n".utf8))
    exit(2)
}

// 1. The app's observability stack. Here: log lines on standard output down to `trace` (Courier's connection
// events; its decisions are at `debug`), swift-metrics' in-process backend, and a tracer that keeps its spans.
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardOutput(label: label)
    handler.logLevel = .trace
    return handler
}
let metrics = TestMetrics()
MetricsSystem.bootstrap(metrics)
let tracer = W3CTracer()
InstrumentationSystem.bootstrap(tracer)

// 2. A policy claiming URL's host: retries on 503, and trace context propagated (on by default for a service;
// written out here to show the key). A host no service claims would never get a traceparent.
let policy = """
    version: 1
    services:
      example:
        hosts: ["\(url.host)"]
        scheme: \(url.scheme)
        propagate-trace-context: true
        retry: { max-attempts: 3, on: [503], backoff: { initial: 50ms, jitter: none } }
    """
let compilation = PolicyCompiler().compile(source: policy, path: "observability.yaml")
guard let graph = compilation.graph, !compilation.hasErrors else {
    print(compilation.diagnostics.map(\.description).joined(separator: "\n"))
    exit(1)
}

// 3. Courier takes them as parameters: the global systems are the app's business.
var configuration = DataLoaderService.Configuration(userAgent: "observability-example/1")
configuration.logger = Logger(label: "courier")
configuration.metricsFactory = MetricsSystem.factory
configuration.tracer = InstrumentationSystem.tracer
let service = DataLoaderService(graph: graph, configuration: configuration)
let loader = service.makeFactory().makeLoader()

print("== log lines ==")
var failures = 0
await withSpan("observability-example") { _ in
    for i in 1...3 {
        do {
            let response = try await loader.load(Request(url: url.description))
            print("request \(i): status \(response.status), \(response.attempts) attempt(s), \(response.bytesReceived) bytes received")
        } catch {
            print("request \(i): failed: \((error as? CourierError)?.kind.description ?? "\(error)")")
            failures += 1
        }
    }
}

print("\n== spans ==")
for span in tracer.recorder.finishedSpans.sorted(by: { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }) {
    var attributes: [String] = []
    span.attributes.forEach { key, value in attributes.append("\(key)=\(show(value))") }
    print("span \(span.operationName) kind=\(span.kind) trace=\(span.traceID) span=\(span.spanID) parent=\(span.parentSpanID ?? "-")")
    if !attributes.isEmpty { print("    " + attributes.sorted().joined(separator: " ")) }
    for event in span.events { print("    event \(event.name)") }
}

print("\n== metrics ==")
for counter in metrics.counters.sorted(by: { $0.label < $1.label }) {
    print("counter \(counter.label) \(describe(counter.dimensions)) = \(counter.totalValue)")
}
for timer in metrics.timers.sorted(by: { $0.label < $1.label }) {
    let values = timer.values
    let mean = values.isEmpty ? 0 : values.reduce(0, +) / Int64(values.count)
    print("timer \(timer.label) \(describe(timer.dimensions)) count=\(values.count) mean=\(Double(mean) / 1e6)ms")
}
for gauge in metrics.recorders.sorted(by: { ($0.label, describe($0.dimensions)) < ($1.label, describe($1.dimensions)) }) {
    print("gauge \(gauge.label) \(describe(gauge.dimensions)) = \(gauge.lastValue.map { Int($0) } ?? 0)")
}
exit(failures == 0 ? 0 : 1)

func show(_ attribute: SpanAttribute) -> String {
    switch attribute {
    case .string(let text): text
    case .int64(let number): String(number)
    case .bool(let flag): String(flag)
    default: "\(attribute)"
    }
}

func describe(_ dimensions: [(String, String)]) -> String {
    "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ", ") + "}"
}
