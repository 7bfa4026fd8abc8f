// http-bench: a closed-loop HTTP load generator that drives Courier, AsyncHTTPClient or URLSession the same
// way, so their figures from one run can be compared as ratios. It stops by itself after --requests requests
// or --max-seconds, whichever comes first, and prints one JSON line.
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

func cpuTimes() -> (user: Double, sys: Double, maxRSSKB: Int) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let sys = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return (user, sys, Int(usage.ru_maxrss))
}

/// Hands out request numbers to the workers.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.wrappingAdd(1, ordering: .relaxed).oldValue }
}

func percentile(_ sorted: [Int64], _ p: Double) -> Int64 {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func run(_ options: BenchOptions) async throws {
    let client: any BenchClient
    switch options.client {
    case .ahc: client = try AHCBenchClient(options: options)
    case .urlsession: client = try URLSessionBenchClient(options: options)
    case .courier: client = try CourierBenchClient(options: options)
    }
    // Warm up: one request per worker, so connection set-up is not in the timed window (unless every request
    // makes a new connection anyway).
    try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<options.concurrency { group.addTask { try await client.get() } }
        for try await _ in group {}
    }

    let issued = Counter()
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + .seconds(options.maxSeconds)
    let cpuStart = cpuTimes()
    let results = try await withThrowingTaskGroup(of: (latencies: [Int64], bytes: Int, errors: Int).self) { group in
        for _ in 0..<options.concurrency {
            group.addTask(executorPreference: client.workerExecutor) {
                var latencies: [Int64] = []
                latencies.reserveCapacity(options.requests / options.concurrency + 1)
                var bytes = 0
                var errors = 0
                while issued.next() < options.requests, clock.now < deadline {
                    let t0 = clock.now
                    do {
                        bytes += try await client.get()
                        let d = (clock.now - t0).components
                        latencies.append(d.seconds * 1_000_000 + d.attoseconds / 1_000_000_000_000)
                    } catch {
                        errors += 1
                    }
                }
                return (latencies, bytes, errors)
            }
        }
        var all: [Int64] = []
        var bytes = 0
        var errors = 0
        for try await r in group {
            all += r.latencies
            bytes += r.bytes
            errors += r.errors
        }
        return (all.sorted(), bytes, errors)
    }
    let elapsed = (clock.now - start).components
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    let cpuEnd = cpuTimes()
    try await client.shutdown()
    let done = results.0.count
    let fields: [(String, String)] = [
        ("client", "\"\(options.client.rawValue)\""),
        ("url", "\"\(options.url)\""),
        ("requests", "\(done)"),
        ("errors", "\(results.2)"),
        ("concurrency", "\(options.concurrency)"),
        ("seconds", String(format: "%.4f", seconds)),
        ("req_per_s", String(format: "%.1f", Double(done) / seconds)),
        ("p50_us", "\(percentile(results.0, 0.50))"),
        ("p99_us", "\(percentile(results.0, 0.99))"),
        ("bytes", "\(results.1)"),
        ("mb_per_s", String(format: "%.2f", Double(results.1) / seconds / 1_048_576)),
        ("peak_rss_kb", "\(cpuEnd.maxRSSKB)"),
        ("cpu_user_s", String(format: "%.4f", cpuEnd.user - cpuStart.user)),
        ("cpu_sys_s", String(format: "%.4f", cpuEnd.sys - cpuStart.sys)),
    ]
    print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
}

do {
    let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    try await run(options)
} catch let error as UsageError {
    FileHandle.standardError.write(Data("http-bench: \(error.message)\n\(BenchOptions.usage)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("http-bench: \(error)\n".utf8))
    exit(1)
}
