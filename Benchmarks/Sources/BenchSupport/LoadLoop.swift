// The closed loop both load generators run (http-bench for every client, courier-load for Courier alone), so
// their figures come from the same code. No Foundation here: courier-load's peak RSS should be Courier's.
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CPU time of the process so far, and its peak resident set.
func cpuTimes() -> (user: Double, sys: Double, maxRSSKB: Int) {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let sys = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return (user, sys, Int(usage.ru_maxrss))
}

/// Keeps `value` alive and opaque to the optimiser, so that the work producing it cannot be optimised away.
@inline(never) public func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// An environment variable, without Foundation's `ProcessInfo`.
public func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
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

/// `value` with `digits` decimals (what `String(format: "%.Nf")` prints, for the non-negative figures here).
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "null" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let negative = value < 0
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e18 else { return "\(value)" }
    let n = UInt64(scaled)
    let unit = UInt64(scale)
    var text = String(n / unit)
    if digits > 0 {
        let fraction = String(n % unit)
        text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
    return negative ? "-" + text : text
}

/// One worker's tally.
struct Tally: Sendable {
    var latencies: [Int64] = []
    var bytes = 0
    var errors = 0
    /// Responses whose client told their TLS session, and how many of those were resumed.
    var tlsSessions = 0
    var tlsResumed = 0
    var tls: TLSSummary?
    /// Responses whose client told whether their connection was new, and how many were.
    var connectionsKnown = 0
    var newConnections = 0

    mutating func add(_ fetched: Fetched) {
        bytes += fetched.bytes
        if let tls = fetched.tls {
            tlsSessions += 1
            if tls.resumed { tlsResumed += 1 }
            if self.tls == nil { self.tls = tls }
        }
        if let new = fetched.newConnection {
            connectionsKnown += 1
            if new { newConnections += 1 }
        }
    }

    mutating func merge(_ other: Tally) {
        latencies += other.latencies
        bytes += other.bytes
        errors += other.errors
        tlsSessions += other.tlsSessions
        tlsResumed += other.tlsResumed
        tls = tls ?? other.tls
        connectionsKnown += other.connectionsKnown
        newConnections += other.newConnections
    }
}

/// Runs the closed loop: `options.concurrency` workers each send a request, read the body whole and send the
/// next, until `options.requests` requests or `options.maxSeconds`; then prints one JSON line.
public func runLoad(_ options: BenchOptions, client: any BenchClient) async throws {
    // Warm up: one request per worker, so connection set-up is not in the timed window (unless every request
    // makes a new connection anyway; then it also leaves a TLS session to resume, where the server issues one).
    try await withThrowingTaskGroup(of: Fetched.self) { group in
        for _ in 0..<options.concurrency { group.addTask { try await client.get() } }
        for try await _ in group {}
    }

    let issued = Counter()
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + .seconds(options.maxSeconds)
    let cpuStart = cpuTimes()
    var total = try await withThrowingTaskGroup(of: Tally.self) { group in
        for _ in 0..<options.concurrency {
            group.addTask(executorPreference: client.workerExecutor) {
                var tally = Tally()
                tally.latencies.reserveCapacity(options.requests / options.concurrency + 1)
                while issued.next() < options.requests, clock.now < deadline {
                    let t0 = clock.now
                    do {
                        tally.add(try await client.get())
                        let d = (clock.now - t0).components
                        tally.latencies.append(d.seconds * 1_000_000 + d.attoseconds / 1_000_000_000_000)
                    } catch {
                        tally.errors += 1
                    }
                }
                return tally
            }
        }
        var total = Tally()
        for try await tally in group { total.merge(tally) }
        return total
    }
    let elapsed = (clock.now - start).components
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    let cpuEnd = cpuTimes()
    try await client.shutdown()
    total.latencies.sort()
    let done = total.latencies.count
    let rate = Double(done) / seconds
    var fields: [(String, String)] = [
        ("client", "\"\(options.client)\""),
        ("url", "\"\(options.url)\""),
        ("requests", "\(done)"),
        ("errors", "\(total.errors)"),
        ("concurrency", "\(options.concurrency)"),
        ("seconds", fixed(seconds, 4)),
        ("req_per_s", fixed(rate, 1)),
        ("p50_us", "\(percentile(total.latencies, 0.50))"),
        ("p99_us", "\(percentile(total.latencies, 0.99))"),
        ("bytes", "\(total.bytes)"),
        ("mb_per_s", fixed(Double(total.bytes) / seconds / 1_048_576, 2)),
        ("peak_rss_kb", "\(cpuEnd.maxRSSKB)"),
        ("cpu_user_s", fixed(cpuEnd.user - cpuStart.user, 4)),
        ("cpu_sys_s", fixed(cpuEnd.sys - cpuStart.sys, 4)),
        ("new_connection", "\(options.newConnection)"),
        // With --new-connection every request is one connection, so one handshake for https.
        ("handshakes_per_s", options.newConnection ? fixed(rate, 1) : "null"),
        // Counted where the client tells (Courier), else null.
        ("new_connections", total.connectionsKnown > 0 ? "\(total.newConnections)" : "null"),
        ("tls_resumed", total.tlsSessions > 0 ? "\(total.tlsResumed)" : "null"),
        ("tls_version", total.tls.map { "\"\($0.version)\"" } ?? "null"),
        ("tls_cipher", total.tls.map { "\"\($0.cipher)\"" } ?? "null"),
    ]
    if total.tlsSessions > 0, total.tlsSessions != done {
        fields.append(("tls_sessions", "\(total.tlsSessions)"))
    }
    print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
}

/// The whole program: parses the arguments, makes the client, runs the loop; exits 2 on a usage error and 1 on
/// any other.
public func loadGeneratorMain(
    tool: String, clients: [String], makeClient: (BenchOptions) throws -> any BenchClient
) async -> Never {
    do {
        let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()), clients: clients)
        try await runLoad(options, client: makeClient(options))
        exit(0)
    } catch let error as UsageError {
        writeToStandardError("\(tool): \(error.message)\n\(BenchOptions.usage(tool, clients: clients))\n")
        exit(2)
    } catch {
        writeToStandardError("\(tool): \(error)\n")
        exit(1)
    }
}

/// Writes to file descriptor 2 (glibc's `stderr` is a mutable global, which strict concurrency refuses).
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
