@testable import CourierCoordination
import CourierCore
import CourierRedis
import Testing

private func texts(_ arguments: [[UInt8]]) -> [String] {
    arguments.map { String(decoding: $0, as: UTF8.self) }
}

/// The scripts' arguments, their replies read back, and the configuration's checks: no Redis needed.
@Suite struct FleetScriptsTests {
    @Test func admitArgumentsAreWholeMicroseconds() {
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        #expect(texts(FleetScripts.admitArguments(limit: limit, maxWait: nil)) == ["20000", "180000", "10", "-1"])
        #expect(texts(FleetScripts.admitArguments(limit: limit, maxWait: .milliseconds(150))) == ["20000", "180000", "10", "150000"])
        #expect(texts(FleetScripts.admitArguments(limit: limit, maxWait: .zero))[3] == "0")
        #expect(texts(FleetScripts.admitArguments(limit: limit, maxWait: .milliseconds(-5)))[3] == "0")
        // An interval that is no whole number of microseconds is rounded up: never faster than the policy.
        #expect(texts(FleetScripts.admitArguments(limit: RateLimit(requestsPerSecond: 3, burst: 1), maxWait: nil)) == ["333334", "0", "1", "-1"])
        #expect(FleetScripts.intervalMicroseconds(RateLimit(requestsPerSecond: 10_000_000, burst: 1)) == 1)
    }

    @Test func oddLimitsGiveBoundedArguments() {
        // No rate: only a pause holds requests back, as in the process-local limiter.
        for rate in [0, -1, .nan, .infinity] as [Double] {
            #expect(FleetScripts.intervalMicroseconds(RateLimit(requestsPerSecond: rate, burst: 5)) == 0)
        }
        #expect(FleetScripts.intervalMicroseconds(RateLimit(requestsPerSecond: 1e-12, burst: 1)) == 86_400_000_000, "a day at most")
        #expect(texts(FleetScripts.admitArguments(limit: RateLimit(requestsPerSecond: 10, burst: 0), maxWait: nil)) == ["100000", "0", "1", "-1"])
        #expect(texts(FleetScripts.admitArguments(limit: RateLimit(requestsPerSecond: 10, burst: .max), maxWait: nil))[1] == String(1 << 50))
        #expect(texts(FleetScripts.admitArguments(limit: RateLimit(requestsPerSecond: 10, burst: 2), maxWait: .seconds(1e12)))[3] == String(1 << 50))
        #expect(texts(FleetScripts.pauseArguments(limit: RateLimit(requestsPerSecond: 10, burst: 2), duration: .seconds(30))) == ["30000000", "100000", "2"])
        #expect(texts(FleetScripts.heartbeatArguments(instanceID: "0123456789abcdef", lapse: .seconds(3))) == ["0123456789abcdef", "3000000"])
    }

    @Test func anAdmissionReplyIsReadOrRefusedAsAProtocolError() {
        #expect(FleetAdmission(reply: .array([.integer(1), .integer(0)]), backend: "b") == .go(after: .zero))
        #expect(FleetAdmission(reply: .array([.integer(1), .integer(250_000)]), backend: "b") == .go(after: .milliseconds(250)))
        #expect(FleetAdmission(reply: .array([.integer(0), .integer(1_500_000)]), backend: "b") == .wouldWaitTooLong(.milliseconds(1500)))
        let garbage: [RESPValue] = [
            .simpleString("OK"), .null, .integer(1), .array([]), .array([.integer(1)]), .array([.integer(2), .integer(0)]),
            .array([.integer(1), .integer(-1)]), .array([.bulkString(Array("1".utf8)), .integer(0)]),
            .array([.integer(1), .integer(0), .integer(0)]), .map([]),
        ]
        for reply in garbage {
            guard case .unavailable(let error) = FleetAdmission(reply: reply, backend: "127.0.0.1:6379") else {
                Issue.record("\(reply) was accepted")
                continue
            }
            #expect(error.kind == .protocolViolation)
            #expect(error.description.hasPrefix("redis 127.0.0.1:6379: protocol: the admission script answered "))
        }
    }

    @Test func instanceIDsAreSixteenRandomHexDigits() {
        let ids = (0..<100).map { _ in FleetConfiguration.randomInstanceID() }
        #expect(ids.allSatisfy { $0.count == 16 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(Set(ids).count == 100)
    }

    @Test func anUnusableConfigurationIsAConfigurationError() throws {
        let redis = RedisConfiguration(url: try RedisURL("redis://127.0.0.1:6379"))
        let good = FleetConfiguration(redis: redis)
        #expect(good.problem == nil)
        #expect(good.heartbeatInterval == .seconds(1) && good.heartbeatLapse == .seconds(3))
        #expect(good.keys == FleetKeys(prefix: "courier:"))
        var bad = good
        bad.heartbeatLapse = .seconds(1)
        #expect(bad.problem?.kind == .configuration)
        #expect(bad.problem?.description.contains("lapse") == true)
        bad = good
        bad.heartbeatInterval = .zero
        #expect(bad.problem?.kind == .configuration)
        bad = good
        bad.instanceID = ""
        #expect(bad.problem?.kind == .configuration)
        bad = good
        bad.keys = FleetKeys(prefix: "")
        #expect(bad.problem?.kind == .configuration)
    }

    @Test func startRefusesAnUnusableConfigurationBeforeConnecting() async throws {
        var configuration = FleetConfiguration(redis: RedisConfiguration(url: try RedisURL("redis://127.0.0.1:1")))
        configuration.heartbeatLapse = .milliseconds(500)
        let coordinator = FleetCoordinator(configuration: configuration)
        let error = await #expect(throws: RedisError.self) { try await coordinator.start() }
        #expect(error?.kind == .configuration)
        await coordinator.shutdown()
    }
}
