import CourierCore
import CourierTestSupport
import CourierTransport
import Foundation
import Testing

/// The part of a `Content-Length` body that does not come with the head is received straight into the body's
/// array (no read buffer, no copy): the same results, limits, errors and accounting as through the parser.
/// (A reset mid-body on this path is `HTTPClientAgainstHostileServerTests.resetMidBodyIsAnError`.)
@Suite(.timeLimit(.minutes(1))) struct HTTPClientDirectBodyTests {
    static let bodySize = 300_000
    static let head = "HTTP/1.1 200 OK\r\nContent-Length: \(bodySize)\r\n\r\n"

    /// `count` bytes of the pattern, starting at byte `from` of the body.
    static func body(from: Int = 0, count: Int) -> [UInt8] { (from..<(from + count)).map { UInt8($0 % 251) } }

    /// A server that sends the head, then `count` body bytes, then nothing for `stall` seconds.
    static func stallingServer(after count: Int, stall: Double) throws -> ScriptedServer {
        try ScriptedServer { c in
            c.readRequestHead()
            c.write(Self.head)
            Thread.sleep(forTimeInterval: 0.01)
            c.write(Self.body(count: count))
            Thread.sleep(forTimeInterval: stall)
        }
    }

    @Test func aBodyWrittenInPiecesArrivesWholeAndCountedAndTheConnectionIsReused() async throws {
        let server = try ScriptedServer { c in
            for _ in 0..<2 {
                guard c.readRequestHead() != nil else { return }
                // The head alone first, then the body in 25 pieces with pauses: many direct reads, most of
                // which park.
                c.write(Self.head)
                let piece = Self.bodySize / 25
                for start in stride(from: 0, to: Self.bodySize, by: piece) {
                    Thread.sleep(forTimeInterval: 0.002)
                    c.write(Self.body(from: start, count: min(piece, Self.bodySize - start)))
                }
            }
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        for round in 0..<2 {
            let response = try await client.execute(HTTPRequest(url: url(server.url("/"))))
            #expect(response.body == Self.body(count: Self.bodySize), "round \(round)")
            #expect(response.metrics.bytesReceived == Int64(Self.head.utf8.count + Self.bodySize), "round \(round)")
            #expect(response.metrics.reusedConnection == (round == 1))
        }
        #expect(server.acceptedConnections == 1)
    }

    @Test func aSmallBodyWhoseHeadCameAloneIsReceivedDirectlyToo() async throws {
        let server = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n")
            Thread.sleep(forTimeInterval: 0.02)
            c.write("hello")
            Thread.sleep(forTimeInterval: 0.02)
            c.write(" world")
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        let response = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(response.body == Array("hello world".utf8))
    }

    @Test func aBodyCutShortIsAProtocolErrorAndTheConnectionIsNotReused() async throws {
        let server = try ScriptedServer { c in
            guard c.readRequestHead() != nil else { return }
            if c.index == 1 {
                c.write(Self.head)
                Thread.sleep(forTimeInterval: 0.01)
                c.write(Self.body(count: 200_000))
                c.close()
            } else {
                c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        await expectKind(.protocol) { _ = try await client.execute(HTTPRequest(url: url(server.url("/")))) }
        let next = try await client.execute(HTTPRequest(url: url(server.url("/"))))
        #expect(next.body == Array("ok".utf8))
        #expect(server.acceptedConnections == 2)
    }

    @Test func aStalledBodyTimesOut() async throws {
        await expectIdleTimeout(from: try Self.stallingServer(after: 1000, stall: 3))
    }

    @Test func aDeclaredLengthOverTheLimitFailsWithoutReadingIt() async throws {
        let server = try Self.stallingServer(after: Self.bodySize, stall: 0)
        var configuration = HTTPClientConfiguration()
        configuration.maxBodyBytes = 100_000
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        await expectKind(.bodyTooLarge) { _ = try await client.execute(HTTPRequest(url: url(server.url("/")))) }
    }

    @Test func cancellingMidBodyEndsTheRequestPromptly() async throws {
        let server = try Self.stallingServer(after: 1000, stall: 5)
        let client = HTTPClient()
        defer { client.shutdown() }
        let task = Task { try await client.execute(HTTPRequest(url: url(server.url("/")))) }
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        task.cancel()
        await expectKind(.cancelled) { _ = try await task.value }
        #expect(ContinuousClock.now - cancelled < .seconds(3))
    }
}
