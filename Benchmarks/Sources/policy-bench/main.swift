// policy-bench: compiles a generated policy of N services and times route look-ups.
//
// Peers measured in the same run, so the figures survive a noisy shared machine:
// - compile: `Yams.compose` of the same text (parsing alone; the compiler cannot be faster than its parser);
// - look-up: a `[String: Int]` look-up of the URL's host (the floor for any hash-based router).
import CourierCore
import CourierKit
import CourierPolicy
import Foundation
import Yams

struct Options {
    var services = 10_000
    var lookups = 1_000_000
    var rounds = 5
    init() {
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let a = args.next() {
            switch a {
            case "--services": services = Int(args.next() ?? "") ?? services
            case "--lookups": lookups = Int(args.next() ?? "") ?? lookups
            case "--rounds": rounds = Int(args.next() ?? "") ?? rounds
            default:
                FileHandle.standardError.write("usage: policy-bench [--services N] [--lookups N] [--rounds N]\n".data(using: .utf8)!)
                exit(2)
            }
        }
    }
}

func generatePolicy(services: Int) -> String {
    var yaml = """
        version: 1
        defaults:
          timeouts: { connect: 5s, idle: 30s, total: 60s }
          retry:
            max-attempts: 3
            backoff: { initial: 250ms, max: 10s, multiplier: 2, jitter: full }
          rate-limit: { requests-per-second: 50, burst: 50 }
        services:

        """
    yaml.reserveCapacity(services * 260)
    for i in 0..<services {
        yaml += """
              svc-\(i):
                hosts: [svc-\(i).example.com, "*.svc-\(i).example.net"]
                scheme: https
                rate-limit:
                  requests-per-second: \(i % 40 + 1)
                  endpoints: { /v1/search: { requests-per-second: 2 } }
                retry: { max-attempts: \(i % 4 + 1) }
                timeouts: { total: 20s }

            """
    }
    return yaml
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

extension Duration {
    /// In seconds (CourierCore's own is `package`, out of this package's reach).
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

let options = Options()
let text = generatePolicy(services: options.services)
let path = FileManager.default.temporaryDirectory.appendingPathComponent("policy-bench-\(getpid()).yaml").path
try text.write(toFile: path, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: path) }

let clock = ContinuousClock()
var compileTimes: [Double] = []
var parseTimes: [Double] = []
var graph: PolicyGraph?
for _ in 0..<options.rounds {
    let start = clock.now
    let compilation = PolicyCompiler().compile(file: path)
    compileTimes.append((clock.now - start).seconds)
    if compilation.hasErrors {
        for d in compilation.diagnostics.prefix(5) { print(d) }
        fatalError("the generated policy does not compile")
    }
    graph = compilation.graph
    let parseStart = clock.now
    _ = try Yams.compose(yaml: text)
    parseTimes.append((clock.now - parseStart).seconds)
}

// Look-ups over a fixed pseudo-random mix of exact hosts, wildcard hosts, endpoint overrides and unknown hosts.
var rng = SystemRandomNumberGenerator()
var urls: [HTTPURL] = []
for _ in 0..<4096 {
    let i = Int.random(in: 0..<options.services, using: &rng)
    switch Int.random(in: 0..<4, using: &rng) {
    case 0: urls.append(HTTPURL("https://svc-\(i).example.com/v1/tracks/42")!)
    case 1: urls.append(HTTPURL("https://cdn.eu.svc-\(i).example.net/images/a.jpg")!)
    case 2: urls.append(HTTPURL("https://svc-\(i).example.com/v1/search?q=x")!)
    default: urls.append(HTTPURL("https://unknown-\(i).example.org/")!)
    }
}
let g = graph!
var floor: [String: Int] = [:]
for (i, s) in g.services.enumerated() { for h in s.hosts where !h.isWildcard { floor[h.name] = i } }

var lookupNs: [Double] = []
var hostNs: [Double] = []
var floorNs: [Double] = []
var sink = 0
for _ in 0..<options.rounds {
    let start = clock.now
    for n in 0..<options.lookups {
        let route = g.route(for: urls[n & 4095], method: .get)
        sink &+= route.endpointKey.pathPrefix.utf8.count
    }
    lookupNs.append((clock.now - start).seconds * 1e9 / Double(options.lookups))
    let hostStart = clock.now
    for n in 0..<options.lookups {
        if let (service, _) = g.service(forHost: urls[n & 4095].host) { sink &+= service.hosts.count }
    }
    hostNs.append((clock.now - hostStart).seconds * 1e9 / Double(options.lookups))
    let floorStart = clock.now
    for n in 0..<options.lookups {
        sink &+= floor[urls[n & 4095].host] ?? 0
    }
    floorNs.append((clock.now - floorStart).seconds * 1e9 / Double(options.lookups))
}

let compile = median(compileTimes)
let parse = median(parseTimes)
let lookup = median(lookupNs)
let hashFloor = median(floorNs)
let host = median(hostNs)
print(
    """
    {"services":\(options.services),"policy_bytes":\(text.utf8.count),\
    "compile_s":\(String(format: "%.4f", compile)),"yams_compose_s":\(String(format: "%.4f", parse)),\
    "compile_over_compose":\(String(format: "%.2f", compile / parse)),\
    "route_ns":\(String(format: "%.1f", lookup)),"host_match_ns":\(String(format: "%.1f", host)),"dictionary_ns":\(String(format: "%.1f", hashFloor)),\
    "route_over_dictionary":\(String(format: "%.2f", lookup / hashFloor)),"sink":\(sink % 7)}
    """
)
