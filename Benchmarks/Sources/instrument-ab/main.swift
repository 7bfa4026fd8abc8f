// instrument-ab: what the loader's instruments cost, measured inside one process (issue 11). One HTTPClient, and
// over it one loader per configuration (the no-op defaults, backends recording nothing, the in-memory backends,
// ...); the loaders take turns in batches of loads, in forward order on even rounds and backward on odd ones,
// and each batch's CPU is the whole process's (every thread: callers, event loop) over the batch. Every
// configuration runs in the same process, on the same connections and heap, so what moves between processes on
// this host (its faster and slower phases, the address layout) falls on all of them alike; run-instrumentation.sh
// compares builds, this compares configurations of one build much more closely.
// Prints each configuration's median CPU µs per load and the median [range] of its per-round ratio to the first.
//
//   instrument-ab URL [--batch N] [--rounds N] [--concurrency N] [--configs none,null,memory,...]
//
// Configurations: none, null, untraced (in-memory logs and metrics), traced (InMemoryTracer only), memory (all
// three), exported (memory, spans taken every 10 ms), beside (none, with the InMemoryTracer calls of one load
// made by the benchmark after each load: the tracer's own work, apart from Courier's code that makes the calls),
// beside-dropped (the same, with the finished spans taken and dropped after each load, as an exporter would);
// bare (no loader: the same requests through `HTTPClient.execute` on the same client, as `courier-load --client
// courier` sends them: the loader's floor, issue 23, measured in the same process).
// Client pinned by the caller (taskset -c 0); loopback only.
import BenchSupport
import CourierBench
import CourierCore
import CourierKit
import CourierTransport
import InMemoryTracing

#if canImport(Glibc)
import Glibc
#endif

func processCPUNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func mode(_ name: String) -> LoaderBenchInstruments.Mode? {
    switch name {
    case "none": .defaults
    case "null": .null
    case "untraced": .memory(only: ["logs", "metrics"])
    case "traced": .memory(only: ["tracing"])
    case "memory": .memory()
    case "exported": .memory(exported: true)
    case "beside", "beside-dropped", "bare": .defaults
    default: nil
    }
}

/// `count` requests of `request` through the bare client, `concurrency` at a time.
func runBare(_ client: HTTPClient, request: HTTPRequest, count: Int, concurrency: Int) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let share = count / concurrency + (worker < count % concurrency ? 1 : 0)
            group.addTask {
                for _ in 0..<share {
                    let response = try await client.execute(request)
                    guard (200..<300).contains(response.status) else { throw UsageError(message: "status \(response.status)") }
                }
            }
        }
        try await group.waitForAll()
    }
}

/// `count` loads of `url` through `loader`, `concurrency` at a time; with `beside`, each followed by the tracer
/// calls of one load on it (CourierBench's TracerCallsOfOneLoad).
func run(
    _ loader: DataLoader, url: String, count: Int, concurrency: Int, beside: InMemoryTracer? = nil,
    dropsSpans: Bool = false
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let share = count / concurrency + (worker < count % concurrency ? 1 : 0)
            group.addTask {
                for _ in 0..<share {
                    let response = try await loader.load(Request(url: url))
                    guard response.isSuccess else { throw UsageError(message: "status \(response.status)") }
                    if let beside {
                        blackHole(TracerCallsOfOneLoad.make(beside))
                        if dropsSpans { blackHole(beside.popFinishedSpans()) }
                    }
                }
            }
        }
        try await group.waitForAll()
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let url = arguments.first, !url.hasPrefix("--") else {
    print("usage: instrument-ab URL [--batch N] [--rounds N] [--concurrency N] [--configs none,null,memory,...]")
    exit(2)
}
var batch = 500, rounds = 30, concurrency = 1
var names = ["none", "null", "memory"]
var rest = arguments.dropFirst().makeIterator()
while let flag = rest.next() {
    guard let value = rest.next() else { print("\(flag) needs a value"); exit(2) }
    switch flag {
    case "--batch": batch = Int(value) ?? batch
    case "--rounds": rounds = Int(value) ?? rounds
    case "--concurrency": concurrency = Int(value) ?? concurrency
    case "--configs": names = value.split(separator: ",").map(String.init)
    default: print("unknown option \(flag)"); exit(2)
    }
}
guard names.allSatisfy({ mode($0) != nil }) else { print("unknown configuration in \(names)"); exit(2) }

let options = try BenchOptions(arguments: ["--url", url, "--concurrency", "\(concurrency)"], clients: ["loader"])
let client = HTTPClient(configuration: CourierBenchClient.configuration(options))
let loaders = try names.map { try CourierLoaderBenchClient.makeLoader(url: url, client: client, mode: mode($0)!) }
let besides = names.map {
    $0.hasPrefix("beside") ? InMemoryTracer(recordInjections: false, recordExtractions: false) : nil
}
let drops = names.map { $0 == "beside-dropped" }
let bares = names.map { $0 == "bare" }
let bareRequest = HTTPRequest(url: HTTPURL(url)!, decompress: false)
/// One batch of configuration `index`.
func batchOf(_ index: Int) async throws {
    if bares[index] {
        return try await runBare(client, request: bareRequest, count: batch, concurrency: concurrency)
    }
    try await run(
        loaders[index], url: url, count: batch, concurrency: concurrency, beside: besides[index],
        dropsSpans: drops[index]
    )
}
// Warm-up: connections, the heap, every configuration's code.
for index in names.indices { try await batchOf(index) }

var samples = [[Double]](repeating: [], count: names.count)
for round in 0..<rounds {
    let order = round % 2 == 0 ? Array(names.indices) : names.indices.reversed()
    for index in order {
        let start = processCPUNanoseconds()
        try await batchOf(index)
        samples[index].append(Double(processCPUNanoseconds() - start) / Double(batch) / 1000)
    }
}
client.shutdown()

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
/// `value` with `digits` decimals (no Foundation here).
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = "\(scaled / Int(scale))"
    guard digits > 0 else { return whole }
    let fraction = "\(abs(scaled) % Int(scale))"
    return whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
}
print("\(rounds) rounds of \(batch) loads per configuration, \(concurrency) in flight; CPU µs per load (process)")
for (index, name) in names.enumerated() {
    let ratios = zip(samples[index], samples[0]).map { $0 / $1 }
    var line = "  \(name): \(fixed(median(samples[index]), 1)) µs"
    if index > 0 {
        let range = "[\(fixed(ratios.min()!, 3))–\(fixed(ratios.max()!, 3))]"
        line += ", ratio to \(names[0]) \(fixed(median(ratios), 3)) \(range)"
    }
    print(line)
}
