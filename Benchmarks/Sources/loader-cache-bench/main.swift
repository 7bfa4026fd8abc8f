// loader-cache-bench: a fresh HTTP cache hit through `DataLoader.load` against the same request over loopback to
// a server (nginx in run-loader-cache.sh), issue 10's goal: a hit at least 10x faster.
//
// Both sides go through the same data loader API and policy route (a service claiming 127.0.0.1): "network"
// has no cache directory, so every load is a request on a kept-alive connection; "hit" has one, primed by one
// load, after which every load must report `cache == .hit`. Sequential loads (one caller), rounds interleaved,
// and the ratio is taken within each round; the report gives the median and range of the ratios.
import CourierCore
import CourierKit
import Foundation

struct Options {
    var url = ""
    var requests = 20_000
    var rounds = 5
    var directory = FileManager.default.temporaryDirectory.path
    /// Only one side (for profiling): "hit" or "network".
    var only: String?

    init() {
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let a = args.next() {
            switch a {
            case "--url": url = args.next() ?? ""
            case "--requests": requests = args.next().flatMap { Int($0) } ?? requests
            case "--rounds": rounds = args.next().flatMap { Int($0) } ?? rounds
            case "--dir": directory = args.next() ?? directory
            case "--only": only = args.next()
            default:
                FileHandle.standardError.write(Data("usage: loader-cache-bench --url URL [--requests N] [--rounds N] [--dir DIR]\n".utf8))
                exit(2)
            }
        }
        guard HTTPURL(url) != nil else {
            FileHandle.standardError.write(Data("loader-cache-bench: give --url http://127.0.0.1:PORT/PATH\n".utf8))
            exit(2)
        }
    }
}

let options = Options()
let policyPath = options.directory + "/loader-cache-bench-\(getpid()).yaml"
try """
    version: 1
    services:
      bench:
        hosts: [127.0.0.1]
        scheme: http
        retry: { max-attempts: 1 }
        cache: { ttl: 1h, max-size: 64MB }
    """.write(toFile: policyPath, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: policyPath) }

/// Loads `url` `count` times through `loader`; returns the mean microseconds per load.
func run(_ loader: DataLoader, count: Int, expect: CacheStatus?) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<count {
        let response = try await loader.load(Request(url: options.url))
        guard response.status == 200, response.cache == expect else {
            throw NSError(domain: "loader-cache-bench", code: 1, userInfo: [
                NSLocalizedDescriptionKey: "status \(response.status), cache \(String(describing: response.cache)), expected \(String(describing: expect))",
            ])
        }
    }
    let elapsed = clock.now - start
    return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(count)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let network = try DataLoaderService(policyFile: policyPath, configuration: .init(userAgent: "loader-cache-bench"))
let networkLoader = network.makeFactory().makeLoader()
let cacheDirectory = options.directory + "/loader-cache-bench-\(getpid())"
defer { try? FileManager.default.removeItem(atPath: cacheDirectory) }
var cachedConfiguration = DataLoaderService.Configuration(userAgent: "loader-cache-bench")
cachedConfiguration.cacheDirectory = cacheDirectory
let cached = try DataLoaderService(policyFile: policyPath, configuration: cachedConfiguration)
let cachedLoader = cached.makeFactory().makeLoader()

// Warm-up: connections, the stored response, the code paths.
_ = try await run(networkLoader, count: 200, expect: nil)
_ = try await run(cachedLoader, count: 1, expect: .miss)
_ = try await run(cachedLoader, count: 200, expect: .hit)

var networkMeans: [Double] = []
var hitMeans: [Double] = []
var ratios: [Double] = []
for round in 1...options.rounds {
    let n = options.only == "hit" ? 1 : try await run(networkLoader, count: options.requests, expect: nil)
    let h = options.only == "network" ? 1 : try await run(cachedLoader, count: options.requests, expect: .hit)
    networkMeans.append(n)
    hitMeans.append(h)
    ratios.append(n / h)
    print(String(format: "round %d: network %.1f µs/load, hit %.1f µs/load, hit is %.1fx faster", round, n, h, n / h))
}
print(String(
    format: "median: network %.1f µs/load, hit %.1f µs/load; ratio median %.1fx (range %.1f-%.1f), goal >= 10x",
    median(networkMeans), median(hitMeans), median(ratios), ratios.min() ?? 0, ratios.max() ?? 0
))
