// tracer-bench: what a tracer's own calls cost for the two spans of one load, with no loader and no I/O around
// them (issue 11). It makes, per simulated load, the same calls with the same attributes as Courier's
// RequestInstrumentation makes for a load answered on its first attempt (CourierBench's TracerCallsOfOneLoad: a
// client span for the load and a child client span for the attempt, their attributes, the trace context injected
// into the request's header fields, and the two ends). Rounds are interleaved; the median CPU ns per load of each
// configuration is printed.
// Run: swift run -c release --package-path Benchmarks tracer-bench [loads per round] [rounds]
import BenchSupport
import CourierBench
import CourierKit
import Glibc
import InMemoryTracing
import Instrumentation
import Tracing

func threadCPUNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

struct Configuration {
    let name: String
    let updates: Int
    let makeTracer: () -> (any Tracer, drain: () -> Void)
}

let arguments = CommandLine.arguments
let loads = arguments.count > 1 ? Int(arguments[1])! : 20_000
let rounds = arguments.count > 2 ? Int(arguments[2])! : 7
let configurations: [Configuration] = [
    // courier-load's COURIER_INSTRUMENTS=null tracer: the attribute dictionaries are still built, so the
    // difference to it is the tracer's own work.
    Configuration(name: "null tracer (Courier's attribute dictionaries only)", updates: 1) { (NullTracer(), {}) },
    Configuration(name: "InMemoryTracer, spans kept (COURIER_INSTRUMENTS=memory)", updates: 1) {
        (InMemoryTracer(recordInjections: false, recordExtractions: false), {})
    },
    Configuration(name: "InMemoryTracer, spans taken every 100 loads (COURIER_TRACE_EXPORT=1)", updates: 1) {
        let tracer = InMemoryTracer(recordInjections: false, recordExtractions: false)
        return (tracer, { blackHole(tracer.popFinishedSpans()) })
    },
    Configuration(name: "the same, attributes handed over twice per span (before session 12)", updates: 2) {
        let tracer = InMemoryTracer(recordInjections: false, recordExtractions: false)
        return (tracer, { blackHole(tracer.popFinishedSpans()) })
    },
]
var samples = [[Double]](repeating: [], count: configurations.count)
for round in 0..<rounds {
    let order = round % 2 == 0 ? Array(configurations.indices) : configurations.indices.reversed()
    for index in order {
        let configuration = configurations[index]
        let (tracer, drain) = configuration.makeTracer()
        let start = threadCPUNanoseconds()
        for i in 0..<loads {
            blackHole(TracerCallsOfOneLoad.make(tracer, updates: configuration.updates))
            if i % 100 == 99 { drain() }
        }
        samples[index].append(Double(threadCPUNanoseconds() - start) / Double(loads))
    }
}
for (index, configuration) in configurations.enumerated() {
    let sorted = samples[index].sorted()
    let median = sorted[sorted.count / 2]
    print("\(configuration.name): \(Int(median)) ns per load [\(Int(sorted.first!))–\(Int(sorted.last!))]")
}
