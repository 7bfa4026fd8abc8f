// fleet REDIS_URL URL [INSTANCES] [SECONDS]
//
// A service that runs as several instances, sharing one rate limit through Redis. Each instance is a
// DataLoaderService of its own, with its own Redis connection and heartbeat, as separate processes would be; each
// keeps four loads of URL going for SECONDS. The policy allows the whole fleet 20 requests per second with a burst
// of 5 (`scope: fleet`), so however many instances run, the server sees at most 20 x SECONDS + 5. The example
// prints what each instance sent and whether the shared limit held.
import CourierCore
import CourierKit
import CourierPolicy
import Foundation

let arguments = CommandLine.arguments
guard (3...5).contains(arguments.count), HTTPURL(arguments[2]) != nil else {
    FileHandle.standardError.write(Data("usage: fleet REDIS_URL URL [INSTANCES] [SECONDS]\n".utf8))
    exit(2)
}
let redisURL = arguments[1]
let url = arguments[2]
let instances = arguments.count > 3 ? max(1, Int(arguments[3]) ?? 4) : 4
let seconds = arguments.count > 4 ? max(1, Int(arguments[4]) ?? 3) : 3
let (rate, burst) = (20, 5)

// 1. The policy: the coordination backend, and a service whose limit is the fleet's, not each instance's.
let host = HTTPURL(url)!.host
let policy = """
    version: 1
    coordination:
      redis:
        url: "\(redisURL)"
        key-prefix: "courier:fleet-example:"
        timeout: 100ms
      on-unavailable: local          # while Redis is down, each instance keeps its share of the limit
    services:
      example:
        hosts: ["\(host)"]
        scheme: \(url.hasPrefix("https") ? "https" : "http")
        rate-limit: { requests-per-second: \(rate), burst: \(burst), scope: fleet }
    """
let path = NSTemporaryDirectory() + "courier-fleet-example-\(getpid()).yaml"
try policy.write(toFile: path, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: path) }

// 2. The instances. start() checks Redis (a wrong password or an unreachable server is an error here).
var services: [DataLoaderService] = []
for _ in 0..<instances {
    let service = try DataLoaderService(policyFile: path, configuration: .init(userAgent: "fleet-example/1.0"))
    do {
        try await service.start()
    } catch {
        FileHandle.standardError.write(Data("fleet: \(error)\n".utf8))
        exit(1)
    }
    services.append(service)
}

// 3. Every instance loads as fast as its four loaders may, for `seconds`; the fleet's limit paces them all.
let clock = ContinuousClock()
let started = clock.now
let stop = started + .seconds(seconds)
let sent = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
    for (index, service) in services.enumerated() {
        let loader = service.makeFactory().makeLoader()
        for _ in 0..<4 {
            group.addTask {
                var count = 0
                while clock.now < stop {
                    let response = try await loader.load(Request(url: url))
                    guard response.status == 200 else { throw CourierError(.protocol, "status \(response.status)") }
                    if clock.now <= stop { count += 1 }
                }
                return (index, count)
            }
        }
    }
    var sent = [Int](repeating: 0, count: services.count)
    for try await (index, count) in group { sent[index] += count }
    return sent
}

// 4. What each sent, and whether the fleet as a whole kept the limit.
let bound = rate * seconds + burst
let total = sent.reduce(0, +)
for (index, count) in sent.enumerated() {
    print("instance \(index + 1): \(count) requests")
}
print("fleet: \(total) requests in \(seconds) s; the shared limit allows at most \(bound) (\(rate)/s x \(seconds) s + burst \(burst))")
print(total <= bound ? "the shared limit held" : "the shared limit did NOT hold")
for service in services { await service.shutdown() }
exit(total <= bound ? 0 : 1)
