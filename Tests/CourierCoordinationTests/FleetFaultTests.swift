@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Foundation
import Testing

private let limit = RateLimit(requestsPerSecond: 100, burst: 100)

/// Redis killed, restarted, stopped, refusing the password, or replaced by a server that answers garbage.
@Suite(.serialized) struct FleetFaultTests {
    @Test func aKilledRedisFailsAdmissionsFastAndARestartedOneIsUsedAgain() async throws {
        let server = try await RedisServer.start()
        let coordinator = try makeCoordinator(
            server.url(), instanceID: "survivor", heartbeat: .milliseconds(100), lapse: .seconds(1),
            commandTimeout: .milliseconds(200), connectTimeout: .milliseconds(500)
        )
        try await coordinator.start()
        #expect(goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil)) == .zero)
        await server.kill()
        var slowest = 0.0
        var sawBreakerOpen = false
        for _ in 0..<20 {
            let start = Deadline.now()
            let error = unavailableError(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil))
            slowest = max(slowest, milliseconds(since: start))
            #expect(error?.kind == .unavailable, "no timeout paid: \(String(describing: error))")
            sawBreakerOpen = sawBreakerOpen || !coordinator.isAvailable
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(sawBreakerOpen)
        #expect(slowest < 200, "no admission waited for its 200 ms deadline (slowest \(slowest) ms)")
        let pause = await coordinator.pause(endpointKey: "e/v1", limit: limit, for: .seconds(1))
        #expect(throws: RedisError.self) { try pause.get() }

        let back = Deadline.now()
        try await server.restart()
        let redis = try inspector(server)
        defer { redis.shutdown() }
        var recovered: Double?
        for _ in 0..<300 where recovered == nil {
            if case .go = await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil) { recovered = milliseconds(since: back) }
            else { try await Task.sleep(for: .milliseconds(10)) }
        }
        let reconnect = try #require(recovered, "admissions never succeeded again")
        #expect(reconnect < 2_000, "back on Redis \(reconnect) ms after the restart began")
        #expect(coordinator.isAvailable)
        // The new server started with an empty script cache: EVALSHA met NOSCRIPT, and EVAL loaded the script.
        #expect(try await redis.send(RedisCommand("SCRIPT", "EXISTS", FleetScripts.admit.sha1)) == .array([.integer(1)]))
        // The heartbeat registered the instance again.
        #expect(await eventually(within: 2) { (try? await redis.send(RedisCommand("ZSCORE", "\(testPrefix)instances", "survivor"))) != .null })
        print("fleet: Redis killed, admissions failed in at most \(String(format: "%.2f", slowest)) ms; restarted, admitting again after \(String(format: "%.0f", reconnect)) ms")
        await coordinator.shutdown()
    }

    @Test func aStoppedRedisTimesOutTheFirstAdmissionsThenTheBreakerFailsTheRest() async throws {
        let server = try await RedisServer.start()
        defer { server.resume() }
        let coordinator = try makeCoordinator(server.url(), commandTimeout: .milliseconds(50), connectTimeout: .milliseconds(300))
        try await coordinator.start()
        #expect(goWait(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil)) == .zero)
        server.pause()
        let firsts = await withTaskGroup(of: FleetAdmission.self) { group in
            for _ in 0..<10 { group.addTask { await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil) } }
            return await group.reduce(into: [FleetAdmission]()) { $0.append($1) }
        }
        // The first call times out; requests that waited behind it for a batch then find the breaker open and fail
        // at once instead of paying a timeout of their own.
        let kinds = firsts.compactMap { if case .unavailable(let error) = $0 { error.kind } else { nil } }
        #expect(kinds.count == 10 && kinds.contains(.timeout), "\(firsts)")
        #expect(kinds.allSatisfy { $0 == .timeout || $0 == .unavailable }, "\(firsts)")
        #expect(!coordinator.isAvailable)
        for _ in 0..<20 {
            #expect(unavailableError(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil))?.kind == .unavailable, "the breaker fails it")
            try await Task.sleep(for: .milliseconds(10))
        }
        if case .failure(let error) = await coordinator.pause(endpointKey: "e/v1", limit: limit, for: .seconds(1)) {
            #expect(error.kind == .unavailable)
        } else {
            Issue.record("a pause reached a stopped Redis")
        }
        server.resume()
        #expect(await eventually(within: 3) {
            if case .go = await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil) { true } else { false }
        }, "admissions succeed again after SIGCONT")
        #expect(coordinator.isAvailable)
        await coordinator.shutdown()
    }

    @Test func aWrongPasswordOrAnUnreachableRedisFailsStartNamingTheBackend() async throws {
        let server = try await RedisServer.start(password: "the-right-one")
        let wrong = try makeCoordinator(server.url(password: "not-the-password-7f3a"))
        let refused = await #expect(throws: RedisError.self) { try await wrong.start() }
        #expect(refused?.kind == .authentication)
        #expect(refused?.description.hasPrefix("redis 127.0.0.1:\(server.port): authentication: WRONGPASS") == true, "\(String(describing: refused))")
        #expect(refused?.description.contains("not-the-password") == false, "the password is not repeated")
        let none = try makeCoordinator(server.url())
        let missing = await #expect(throws: RedisError.self) { try await none.start() }
        #expect(missing?.kind == .authentication)
        let right = try makeCoordinator(server.url(password: "the-right-one"))
        try await right.start()
        for coordinator in [wrong, none, right] { await coordinator.shutdown() }

        let closed = try ClosedPort()
        let unreachable = try makeCoordinator("redis://127.0.0.1:\(closed.port)")
        let error = await #expect(throws: RedisError.self) { try await unreachable.start() }
        #expect(error?.kind == .unavailable)
        #expect(error?.description.hasPrefix("redis 127.0.0.1:\(closed.port): unavailable: ") == true, "\(String(describing: error))")
        await unreachable.shutdown()
    }

    @Test(arguments: ["HTTP/1.1 400 Bad Request\r\n\r\n", "$-7\r\n", "$99999999999\r\n"])
    func garbageFromAFakeServerIsAProtocolError(garbage: String) async throws {
        let server = try ScriptedServer { connection in
            _ = connection.readAvailable()
            connection.write("+PONG\r\n")  // the handshake's PING
            _ = connection.readAvailable()
            connection.write(garbage)
            _ = connection.readAvailable(waitingUpTo: 2)
            connection.close()
        }
        defer { server.stop() }
        let url = "redis://127.0.0.1:\(server.port)"
        let starting = try makeCoordinator(url)
        let error = await #expect(throws: RedisError.self) { try await starting.start() }
        #expect(error?.kind == .protocolViolation, "\(String(describing: error))")
        await starting.shutdown()
        let admitting = try makeCoordinator(url)
        #expect(unavailableError(await admitting.admit(endpointKey: "e/v1", limit: limit, maxWait: nil))?.kind == .protocolViolation)
        await admitting.shutdown()
        let reading = try makeCoordinator(url)
        let statusError = await #expect(throws: RedisError.self) { try await reading.status() }
        #expect(statusError?.kind == .protocolViolation)
        await reading.shutdown()
    }

    @Test func wellFormedRepliesOfTheWrongShapeAreProtocolErrors() async throws {
        // A server that answers the handshake's PING, then says OK to everything (a proxy, or not Redis at all).
        let server = try ScriptedServer { connection in
            var reply = "+PONG\r\n"
            while !connection.readAvailable().isEmpty {
                connection.write(reply)
                reply = "+OK\r\n"
            }
            connection.close()
        }
        defer { server.stop() }
        let coordinator = try makeCoordinator("redis://127.0.0.1:\(server.port)")
        let error = await #expect(throws: RedisError.self) { try await coordinator.start() }
        #expect(error?.kind == .protocolViolation)
        #expect(error?.message.contains("heartbeat script answered a simple string") == true, "\(String(describing: error))")
        let admitted = unavailableError(await coordinator.admit(endpointKey: "e/v1", limit: limit, maxWait: nil))
        #expect(admitted?.kind == .protocolViolation)
        #expect(admitted?.message.contains("admission script answered a simple string") == true)
        let paused = await coordinator.pause(endpointKey: "e/v1", limit: limit, for: .seconds(1))
        #expect(throws: RedisError.self) { try paused.get() }
        let status = await #expect(throws: RedisError.self) { try await coordinator.status() }
        #expect(status?.kind == .protocolViolation)
        await coordinator.shutdown()
    }
}
