import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Foundation
import Testing

/// What `instances` coordinators (each its own connection, as instances would be) sent under one fleet limit.
private struct Run {
    var sent = 0
    var failures: [RedisError] = []
    var largestWait = Duration.zero
}

/// `instances` coordinators with `callers` concurrent callers each share `limit` for `seconds`: each caller
/// admits, sleeps for its wait, and "sends" (records the instant), until its next slot falls after the window.
private func share(_ limit: RateLimit, instances: Int, callers: Int, seconds: Double) async throws -> Run {
    let server = try await RedisServer.start()
    var fleet: [FleetCoordinator] = []
    for _ in 0..<instances {
        let coordinator = try makeCoordinator(server.url())
        try await coordinator.start()
        fleet.append(coordinator)
    }
    #expect(fleet.last?.liveInstances == instances)
    let start = Deadline.now()
    let end = start + .seconds(seconds)
    let results = await withTaskGroup(of: (sends: [Deadline], failure: RedisError?, largestWait: Duration).self) { group in
        for coordinator in fleet {
            for _ in 0..<callers {
                group.addTask {
                    var sends: [Deadline] = []
                    var largestWait = Duration.zero
                    while Deadline.now() < end {
                        switch await coordinator.admit(endpointKey: "partner.example.com/v1", limit: limit, maxWait: nil) {
                        case .go(let wait):
                            largestWait = max(largestWait, wait)
                            if Deadline.now() + wait >= end { return (sends, nil, largestWait) }
                            if wait > .zero { try? await Task.sleep(for: wait) }
                            sends.append(Deadline.now())
                        case .wouldWaitTooLong(let wait):
                            return (sends, RedisError(.server, "refused a wait of \(wait) without a maxWait", backend: ""), largestWait)
                        case .unavailable(let error):
                            return (sends, error, largestWait)
                        }
                    }
                    return (sends, nil, largestWait)
                }
            }
        }
        return await group.reduce(into: [(sends: [Deadline], failure: RedisError?, largestWait: Duration)]()) { $0.append($1) }
    }
    for coordinator in fleet { await coordinator.shutdown() }
    var run = Run()
    for result in results {
        run.sent += result.sends.filter { $0 >= start && $0 < end }.count
        if let failure = result.failure { run.failures.append(failure) }
        run.largestWait = max(run.largestWait, result.largestWait)
    }
    withExtendedLifetime(server) {}
    return run
}

/// The headline bound: within the window, at most rate × seconds + burst requests (plus 1 %), and at least 90 % of
/// that (callers always hold reservations, so the limit is used, not starved).
@Suite(.serialized) struct FleetAccuracyTests {
    @Test(arguments: [(8, 8, 4.0), (64, 2, 2.0)])
    func aSharedLimitHoldsAcrossInstances(instances: Int, callers: Int, seconds: Double) async throws {
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        let run = try await share(limit, instances: instances, callers: callers, seconds: seconds)
        let bound = limit.requestsPerSecond * seconds + Double(limit.burst)
        #expect(run.failures.isEmpty, "\(run.failures)")
        #expect(Double(run.sent) <= bound * 1.01, "\(run.sent) sent, bound \(bound)")
        #expect(Double(run.sent) >= bound * 0.9, "\(run.sent) sent, bound \(bound)")
        print("fleet: \(instances) instances × \(callers) callers sent \(run.sent) in \(seconds) s under 50/s burst 10 (bound \(Int(bound))); longest wait \(String(format: "%.0f", milliseconds(run.largestWait))) ms")
    }
}
