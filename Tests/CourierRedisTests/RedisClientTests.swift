import CourierCore
import CourierRedis
import CourierTestSupport
import Foundation
import Testing

private func makeClient(_ url: String, commandTimeout: Duration = .seconds(2), connectTimeout: Duration = .seconds(2)) throws -> RedisClient {
    RedisClient(configuration: RedisConfiguration(url: try RedisURL(url), connectTimeout: connectTimeout, commandTimeout: commandTimeout))
}

private func milliseconds(since start: Deadline) -> Double {
    Double((Deadline.now() - start).nanosecondsClamped) / 1e6
}

/// A fresh redis-server, and a client of it (the caller shuts it down).
private func startServerAndClient(commandTimeout: Duration = .seconds(2), connectTimeout: Duration = .seconds(2)) async throws -> (RedisServer, RedisClient) {
    let server = try await RedisServer.start()
    return (server, try makeClient(server.url(), commandTimeout: commandTimeout, connectTimeout: connectTimeout))
}

/// A `PING` through a new client for `url`, which must fail: its error.
private func failedPing(_ url: String) async throws -> RedisError? {
    let client = try makeClient(url)
    defer { client.shutdown() }
    return await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
}

/// `count` callers send `ECHO prefix-i` at once on `client`; returns how many got a reply other than their own.
private func echoMismatches(_ client: RedisClient, count: Int, prefix: String) async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<count {
            group.addTask {
                let reply = try await client.send(RedisCommand("ECHO", "\(prefix)-\(index)"), deadline: .now() + .seconds(10))
                return reply.string == "\(prefix)-\(index)" ? 0 : 1
            }
        }
        return try await group.reduce(0, +)
    }
}

/// The client against a real redis-server on 127.0.0.1 (started per test, killed however it ends).
@Suite(.serialized) struct RedisClientTests {
    @Test func basicCommandsAndErrorReplies() async throws {
        let (server, client) = try await startServerAndClient()
        defer { withExtendedLifetime(server) { client.shutdown() } }
        #expect(try await client.send(RedisCommand("SET", "greeting", "hello")) == .simpleString("OK"))
        #expect(try await client.send(RedisCommand("GET", "greeting")).string == "hello")
        #expect(try await client.send(RedisCommand("GET", "missing")) == .null)
        let binary: [UInt8] = [0, 13, 10, 255, 36, 42]
        _ = try await client.send(RedisCommand("SET", arguments: [Array("bin".utf8), binary]))
        #expect(try await client.send(RedisCommand("GET", "bin")).bytes == binary)
        #expect(try await client.send(RedisCommand("INCRBY", "n", "41")) == .integer(41))
        #expect(try await client.send(RedisCommand("RPUSH", "list", "a", "b")) == .integer(2))
        #expect(try await client.send(RedisCommand("LRANGE", "list", "0", "-1")) == .array([.bulkString([97]), .bulkString([98])]))
        // An error reply is a server error; the connection goes on.
        let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("INCR", "greeting")) }
        #expect(error?.kind == .server)
        #expect(error?.serverCode == "ERR")
        let wrongType = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("LPUSH", "greeting", "x")) }
        #expect(wrongType?.serverCode == "WRONGTYPE")
        #expect(try await client.send(RedisCommand("PING")) == .simpleString("PONG"))
        #expect(client.connectivity == .connected(generation: 1))
    }

    @Test func manyConcurrentCallersShareOneConnectionInOrder() async throws {
        let (server, client) = try await startServerAndClient()
        defer { withExtendedLifetime(server) { client.shutdown() } }
        _ = try await client.send(RedisCommand("PING"))
        // 500 callers at once, each with its own reply: a mismatch would hand a caller another's echo.
        let start = Deadline.now()
        let mismatches = try await echoMismatches(client, count: 500, prefix: "caller")
        let concurrent = milliseconds(since: start)
        #expect(mismatches == 0)
        // One connection: commands of one caller keep their order (INCR answers 1, 2, 3…).
        for expected in 1...50 {
            #expect(try await client.send(RedisCommand("INCR", "counter")) == .integer(Int64(expected)))
        }
        let sequentialStart = Deadline.now()
        for _ in 0..<200 { _ = try await client.send(RedisCommand("PING")) }
        let sequential = milliseconds(since: sequentialStart) / 200
        let clients = try await client.send(RedisCommand("CLIENT", "LIST"))
        #expect(clients.string?.split(separator: "\n").count == 1, "one connection")
        print("redis: 500 concurrent ECHOs pipelined in \(String(format: "%.1f", concurrent)) ms; one PING round trip \(String(format: "%.3f", sequential)) ms")
    }

    @Test func authenticationWithAnACLUserOrAPassword() async throws {
        let server = try await RedisServer.start(password: "the-default-password", user: .init(name: "courier", password: "s3cret"))
        let user = try makeClient(server.url(user: "courier", password: "s3cret"))
        defer { user.shutdown() }
        #expect(try await user.send(RedisCommand("ACL", "WHOAMI")).string == "courier")
        let passwordOnly = try makeClient(server.url(password: "the-default-password"))
        defer { passwordOnly.shutdown() }
        #expect(try await passwordOnly.send(RedisCommand("ACL", "WHOAMI")).string == "default")

        let wrong = try makeClient(server.url(user: "courier", password: "wrong"))
        defer { wrong.shutdown() }
        let refused = await #expect(throws: RedisError.self) { try await wrong.send(RedisCommand("PING")) }
        #expect(refused?.kind == .authentication)
        #expect(refused?.description.hasPrefix("redis 127.0.0.1:\(server.port): authentication: WRONGPASS") == true, "\(String(describing: refused))")
        #expect(refused?.description.contains("wrong") == false, "the password is not repeated")
        // Later calls fail fast with the same kind while the breaker is open.
        let again = await #expect(throws: RedisError.self) { try await wrong.send(RedisCommand("PING")) }
        #expect(again?.kind == .authentication)

        let missing = try await failedPing(server.url())
        #expect(missing?.kind == .authentication)
        #expect(missing?.message.hasPrefix("NOAUTH") == true)
    }

    @Test func selectChoosesTheDatabase() async throws {
        let server = try await RedisServer.start()
        let three = try makeClient(server.url(database: 3))
        let zero = try makeClient(server.url())
        let threeAgain = try makeClient(server.url(database: 3))
        defer {
            three.shutdown()
            zero.shutdown()
            threeAgain.shutdown()
        }
        _ = try await three.send(RedisCommand("SET", "where", "db3"))
        #expect(try await zero.send(RedisCommand("GET", "where")) == .null)
        #expect(try await threeAgain.send(RedisCommand("GET", "where")).string == "db3")
        let error = try await failedPing(server.url(database: 99))
        #expect(error?.kind == .server)
        #expect(error?.message.contains("DB index is out of range") == true)
    }

    @Test func scriptsRunByTheirSHAAndAreReloadedAfterAFlush() async throws {
        let (server, client) = try await startServerAndClient()
        defer { withExtendedLifetime(server) { client.shutdown() } }
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        let exists = RedisCommand("SCRIPT", "EXISTS", script.sha1)
        #expect(try await client.send(exists) == .array([.integer(0)]))
        #expect(try await client.evaluate(script, keys: ["hits"], arguments: [Array("5".utf8)]) == .integer(5))
        #expect(try await client.send(exists) == .array([.integer(1)]), "EVAL cached it")
        #expect(try await client.evaluate(script, keys: ["hits"], arguments: [Array("1".utf8)]) == .integer(6))
        _ = try await client.send(RedisCommand("SCRIPT", "FLUSH"))
        #expect(try await client.send(exists) == .array([.integer(0)]))
        #expect(try await client.evaluate(script, keys: ["hits"], arguments: [Array("1".utf8)]) == .integer(7), "NOSCRIPT, then EVAL")
        #expect(try await client.send(exists) == .array([.integer(1)]))
        let broken = await #expect(throws: RedisError.self) { try await client.evaluate(RedisScript("return +"), keys: []) }
        #expect(broken?.kind == .server)
    }

    @Test func aRestartedServerIsUsedAgainWithinASecondOrTwo() async throws {
        let (server, client) = try await startServerAndClient(commandTimeout: .milliseconds(200), connectTimeout: .milliseconds(500))
        defer { client.shutdown() }
        let script = RedisScript("return redis.call('INCR', KEYS[1])")
        #expect(try await client.evaluate(script, keys: ["k"]) == .integer(1))
        await server.kill()
        // While it is down: the first call meets the closed connection or the refused reconnect; calls then fail
        // fast, paying no timeout.
        var fastest = Double.infinity
        var slowest = 0.0
        for _ in 0..<20 {
            let start = Deadline.now()
            let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
            #expect(error?.kind == .unavailable)
            let elapsed = milliseconds(since: start)
            fastest = min(fastest, elapsed)
            slowest = max(slowest, elapsed)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(slowest < 150, "no call waited for a timeout: \(slowest) ms")
        try await Task.sleep(for: .seconds(1))
        let back = Deadline.now()
        try await server.restart()
        let started = milliseconds(since: back)
        var recovered: Double?
        for _ in 0..<300 where recovered == nil {
            if (try? await client.send(RedisCommand("PING"))) == .simpleString("PONG") { recovered = milliseconds(since: back) }
            else { try await Task.sleep(for: .milliseconds(10)) }
        }
        let reconnect = try #require(recovered, "the client never came back")
        #expect(reconnect < 2_000, "back on Redis \(reconnect) ms after it returned")
        // The new server's script cache is empty: EVALSHA meets NOSCRIPT and EVAL runs it.
        #expect(try await client.evaluate(script, keys: ["k"]) == .integer(1))
        print("redis: killed, calls failed fast in \(String(format: "%.2f", fastest))–\(String(format: "%.2f", slowest)) ms; restarted (ready in \(String(format: "%.0f", started)) ms), back on it \(String(format: "%.0f", reconnect)) ms after the restart began")
    }

    @Test func aStoppedServerTimesOutOnceThenTheBreakerFailsFastUntilItResumes() async throws {
        let (server, client) = try await startServerAndClient(commandTimeout: .milliseconds(50), connectTimeout: .milliseconds(300))
        defer {
            server.resume()
            client.shutdown()
        }
        _ = try await client.send(RedisCommand("PING"))
        server.pause()
        // The calls in flight when it hangs fail by their deadline, with a timeout.
        let start = Deadline.now()
        let firsts = await withTaskGroup(of: RedisError?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await client.send(RedisCommand("PING"))
                        return nil
                    } catch {
                        return error as? RedisError
                    }
                }
            }
            return await group.reduce(into: [RedisError?]()) { $0.append($1) }
        }
        let firstElapsed = milliseconds(since: start)
        #expect(firsts.allSatisfy { $0?.kind == .timeout }, "\(firsts)")
        #expect(firstElapsed < 500, "the calls ended by their 50 ms deadline (took \(firstElapsed) ms)")
        // Then the breaker is open: calls fail at once, without their 50 ms.
        var slowest = 0.0
        for _ in 0..<50 {
            let callStart = Deadline.now()
            let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
            #expect(error?.kind == .unavailable)
            slowest = max(slowest, milliseconds(since: callStart))
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(slowest < 25, "calls failed fast while the breaker was open (slowest \(slowest) ms)")
        server.resume()
        let resumed = Deadline.now()
        var recovered: Double?
        for _ in 0..<300 where recovered == nil {
            if (try? await client.send(RedisCommand("PING"))) == .simpleString("PONG") { recovered = milliseconds(since: resumed) }
            else { try await Task.sleep(for: .milliseconds(10)) }
        }
        let recovery = try #require(recovered, "the client never recovered")
        #expect(recovery < 2_500)
        print("redis: stopped, 10 calls timed out in \(String(format: "%.0f", firstElapsed)) ms; then failed fast (slowest \(String(format: "%.2f", slowest)) ms); recovered \(String(format: "%.0f", recovery)) ms after SIGCONT")
    }

    @Test func rediss() async throws {
        let server = try await RedisServer.start(password: "pw", tls: true)
        let configuration = RedisConfiguration(url: try RedisURL(server.url(password: "pw", tls: true)), tls: TLSPolicy(caFile: TestPKI.shared.rootCA))
        let client = RedisClient(configuration: configuration)
        defer { client.shutdown() }
        #expect(try await client.send(RedisCommand("SET", "k", "over TLS"), deadline: .now() + .seconds(5)) == .simpleString("OK"))
        #expect(try await echoMismatches(client, count: 100, prefix: "tls") == 0)
        // A server whose certificate the client does not trust: a TLS error, naming the backend.
        let untrusting = RedisClient(configuration: RedisConfiguration(
            url: try RedisURL(server.url(password: "pw", tls: true)), tls: TLSPolicy(caFile: TestPKI.shared.untrustedRootCA)
        ))
        defer { untrusting.shutdown() }
        let error = await #expect(throws: RedisError.self) { try await untrusting.send(RedisCommand("PING"), deadline: .now() + .seconds(5)) }
        #expect(error?.kind == .tls)
        #expect(error?.description.hasPrefix("redis 127.0.0.1:\(server.port): tls: ") == true)
    }

    /// `rediss://` to a server that wants a client certificate (`tls-auth-clients yes`): the policy's client
    /// identity is presented, and without it the server's refusal is a TLS error naming the backend.
    @Test func redissWithAClientCertificate() async throws {
        let server = try await RedisServer.start(tls: true, requireClientCertificate: true)
        let url = try RedisURL(server.url(tls: true))
        var tls = TLSPolicy(caFile: TestPKI.shared.rootCA)
        tls.clientIdentity = ClientIdentity(
            certificateFile: TestPKI.shared.chain("client"), keyFile: TestPKI.shared.encryptedClientKey,
            keyPassword: TestPKI.shared.clientKeyPassword
        )
        let client = RedisClient(configuration: RedisConfiguration(url: url, tls: tls))
        defer { client.shutdown() }
        #expect(try await client.send(RedisCommand("SET", "k", "mutual"), deadline: .now() + .seconds(5)) == .simpleString("OK"))
        #expect(try await client.send(RedisCommand("GET", "k"), deadline: .now() + .seconds(5)).string == "mutual")

        let anonymous = RedisClient(configuration: RedisConfiguration(url: url, tls: TLSPolicy(caFile: TestPKI.shared.rootCA)))
        defer { anonymous.shutdown() }
        let error = await #expect(throws: RedisError.self) { try await anonymous.send(RedisCommand("PING"), deadline: .now() + .seconds(5)) }
        #expect(error?.kind == .tls, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("redis 127.0.0.1:\(server.port): ") == true)
    }

    @Test func aCancelledCallerLeavesAtOnceAndTheStreamStaysInStep() async throws {
        let (server, client) = try await startServerAndClient()
        defer { withExtendedLifetime(server) { client.shutdown() } }
        _ = try await client.send(RedisCommand("PING"))
        // BLPOP holds the connection's reply stream for 300 ms; its caller is cancelled after 50.
        let blocked = Task { try await client.send(RedisCommand("BLPOP", "nothing", "0.3"), deadline: .now() + .seconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        let start = Deadline.now()
        blocked.cancel()
        let result = await blocked.result
        let elapsed = milliseconds(since: start)
        #expect(throws: RedisError.self) { try result.get() }
        if case .failure(let error as RedisError) = result { #expect(error.kind == .cancelled) }
        #expect(elapsed < 100, "the caller left at once (\(elapsed) ms)")
        // The next command's reply is its own, not BLPOP's (which arrives first and is dropped).
        #expect(try await client.send(RedisCommand("ECHO", "after"), deadline: .now() + .seconds(5)).string == "after")
        #expect(client.connectivity == .connected(generation: 1), "the connection stayed open")
    }
}
