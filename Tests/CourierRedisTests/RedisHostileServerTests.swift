import CourierCore
import CourierRedis
import CourierTestSupport
import Testing

/// The client against fake servers on 127.0.0.1 that send what no Redis would: every case is a protocol error
/// naming the backend, never a crash or a hang.
@Suite(.serialized) struct RedisHostileServerTests {
    private func client(port: Int) throws -> RedisClient {
        RedisClient(configuration: RedisConfiguration(url: try RedisURL("redis://127.0.0.1:\(port)"), connectTimeout: .seconds(2), commandTimeout: .seconds(2)))
    }

    @Test(arguments: [
        "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
        "$99999999999\r\n",
        "$-7\r\n",
        String(repeating: "*1\r\n", count: 100),
        "+PONG\n",
    ])
    func garbageInsteadOfAReplyIsAProtocolError(garbage: String) async throws {
        let server = try ScriptedServer { connection in
            _ = connection.readAvailable()
            connection.write(garbage)
            _ = connection.readAvailable(waitingUpTo: 2)
            connection.close()
        }
        defer { server.stop() }
        let client = try client(port: server.port)
        defer { client.shutdown() }
        let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
        #expect(error?.kind == .protocolViolation, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("redis 127.0.0.1:\(server.port): protocol: ") == true)
    }

    @Test func garbageAfterAGoodHandshakeFailsTheCallAndTheClientReconnects() async throws {
        let server = try ScriptedServer { connection in
            _ = connection.readAvailable()
            connection.write("+PONG\r\n")
            _ = connection.readAvailable()
            connection.write(connection.index == 1 ? ":not-a-number\r\n" : "$2\r\nok\r\n")
            _ = connection.readAvailable(waitingUpTo: 2)
            connection.close()
        }
        defer { server.stop() }
        let client = try client(port: server.port)
        defer { client.shutdown() }
        let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("GET", "k")) }
        #expect(error?.kind == .protocolViolation)
        // The broken connection was closed and a new one made at once; the next call waits for it.
        #expect(try await client.send(RedisCommand("GET", "k")).string == "ok")
        #expect(server.acceptedConnections == 2)
    }

    @Test func aServerThatClosesAtOnceIsUnavailable() async throws {
        let server = try ScriptedServer { connection in connection.close() }
        defer { server.stop() }
        let client = try client(port: server.port)
        defer { client.shutdown() }
        let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
        #expect(error?.kind == .unavailable)
    }

    @Test func aRefusedConnectionIsUnavailableAndNamesTheBackend() async throws {
        let closed = try ClosedPort()
        let client = try client(port: closed.port)
        defer { client.shutdown() }
        let start = Deadline.now()
        let error = await #expect(throws: RedisError.self) { try await client.send(RedisCommand("PING")) }
        #expect(error?.kind == .unavailable)
        #expect(error?.description.hasPrefix("redis 127.0.0.1:\(closed.port): unavailable: connecting") == true, "\(String(describing: error))")
        #expect(Deadline.now() - start < .seconds(1))
    }
}
