@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Synchronization
import Testing

/// Batched admission: one script call admits a list of requests in order, as that many calls would, and requests
/// of one process for one key that arrive while a call is in flight share the next call.
@Suite(.serialized) struct FleetAdmissionBatchTests {
    @Test func batchArgumentsListOneLongestWaitPerRequest() {
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        let texts = FleetScripts.admitArguments(limit: limit, maxWaits: [nil, .milliseconds(150), .zero]).map { String(decoding: $0, as: UTF8.self) }
        #expect(texts == ["20000", "180000", "10", "-1", "150000", "0"])
        #expect(FleetScripts.admitArguments(limit: limit, maxWaits: [nil]) == FleetScripts.admitArguments(limit: limit, maxWait: nil))
    }

    @Test func aBatchReplyIsReadPairByPairAndAnyOtherShapeFailsEveryMember() {
        let good = RESPValue.array([.integer(1), .integer(0), .integer(0), .integer(7), .integer(1), .integer(20)])
        #expect(FleetAdmission.batch(reply: good, count: 3, backend: "b") == [
            .go(after: .zero), .wouldWaitTooLong(.microseconds(7)), .go(after: .microseconds(20)),
        ])
        for bad: RESPValue in [.array([.integer(1), .integer(0)]), .array([.integer(1), .integer(0), .integer(2), .integer(0)]), .null] {
            let admissions = FleetAdmission.batch(reply: bad, count: 2, backend: "b")
            #expect(admissions.count == 2)
            for admission in admissions { #expect(unavailableError(admission)?.kind == .protocolViolation) }
        }
    }

    /// The script on a real Redis: a limit of 10 a second with no burst admits three requests 0, 100 and 200 ms
    /// out; a request whose longest wait is shorter than its slot reserves nothing, and the next one takes that slot.
    @Test func oneCallAdmitsItsRequestsInOrderAsSeparateCallsWould() async throws {
        let server = try await RedisServer.start()
        let redis = try inspector(server)
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        let limit = RateLimit(requestsPerSecond: 10, burst: 1)
        let key = FleetKeys().rateLimit(endpointKey: "api.example.com/v1", limit: limit)
        let reply = try await redis.evaluate(
            FleetScripts.admit, keys: [key], arguments: FleetScripts.admitArguments(limit: limit, maxWaits: [nil, .milliseconds(50), nil, nil])
        )
        let admissions = FleetAdmission.batch(reply: reply, count: 4, backend: "b")
        let waits = admissions.map { admission -> Double in
            switch admission {
            case .go(let wait), .wouldWaitTooLong(let wait): return milliseconds(wait)
            case .unavailable: return -1
            }
        }
        #expect(admissions.map { if case .go = $0 { return true } else { return false } } == [true, false, true, true])
        #expect(abs(waits[0]) < 1 && abs(waits[1] - 100) < 1 && abs(waits[2] - 100) < 1 && abs(waits[3] - 200) < 1, "\(waits)")
        // A batch of refusals only writes nothing.
        let other = FleetKeys().rateLimit(endpointKey: "api.example.com/v2", limit: limit)
        _ = try await redis.evaluate(FleetScripts.admit, keys: [other], arguments: FleetScripts.admitArguments(limit: limit, maxWaits: [nil]))
        let refused = try await redis.evaluate(
            FleetScripts.admit, keys: [other], arguments: FleetScripts.admitArguments(limit: limit, maxWaits: [.milliseconds(1), .milliseconds(1)])
        )
        #expect(FleetAdmission.batch(reply: refused, count: 2, backend: "b").allSatisfy { if case .wouldWaitTooLong = $0 { return true } else { return false } })
    }

    /// 64 concurrent admissions from one instance: far fewer script calls than requests, every request admitted
    /// once, and the waits those of 64 slots in a row (burst 8, then one every 10 ms).
    @Test func concurrentRequestsOfOneInstanceShareCalls() async throws {
        let (server, coordinator, redis) = try await startServerWithCoordinator()
        defer { withExtendedLifetime(server) { redis.shutdown() } }
        _ = try await redis.send(RedisCommand("CONFIG", "RESETSTAT"))
        let limit = RateLimit(requestsPerSecond: 100, burst: 8)
        let waits = await withTaskGroup(of: Duration?.self) { group in
            for _ in 0..<64 {
                group.addTask { goWait(await coordinator.admit(endpointKey: "api.example.com/v1", limit: limit, maxWait: nil)) }
            }
            return await group.reduce(into: [Duration]()) { if let wait = $1 { $0.append(wait) } }
        }
        #expect(waits.count == 64)
        let stats = try await redis.send(RedisCommand("INFO", "commandstats")).string ?? ""
        let calls = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_evalsha:") }
            .flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 64
        #expect(calls < 32, "\(calls) script calls for 64 requests")
        // The last of 64 slots at 100/s after a burst of 8 is 560 ms out (less what passed during the calls).
        let longest = waits.max() ?? .zero
        #expect(longest > .milliseconds(450) && longest <= .milliseconds(570), "\(longest)")
        await coordinator.shutdown()
    }
}
