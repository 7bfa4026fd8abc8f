import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing
import CourierTransport

/// An https URL pointed at a plain-text listener: whatever the client does, no HTTP request line and no
/// credential may reach the listener in clear text. (With TLS the listener sees a ClientHello, answers as a plain
/// HTTP server would, and the handshake fails.)
@Suite struct HTTPSNeverInClearTests {
    static let token = "s3cret-bearer-token-4711"

    @Test func aLoaderWithABearerTokenSendsNothingInClearToAPlainListener() async throws {
        let listener = try PlainListener()
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                authorisers:
                  bearer: { plugin: static-bearer, settings: { token: "\(Self.token)" } }
                services:
                  api:
                    hosts: [127.0.0.1]
                    scheme: https
                    authoriser: bearer
                    retry: { max-attempts: 1 }
                    timeouts: { connect: 10s, total: 20s }
                """),
            configuration: .testing()
        )
        let loader = service.makeFactory().makeLoader()
        let url = "https://127.0.0.1:\(listener.port)/v1/secret"
        let error = await #expect(throws: CourierError.self) { try await loader.load(Request(url: url)) }
        #expect(Self.isTLSFailure(error), "\(String(describing: error))")
        Self.expectNothingInClear(listener.everything)
    }

    @Test func theTransportSendsNothingInClearForAnHTTPSURLWithoutAPort() async throws {
        // `https://host/` with no port means 443, never a plain connection to 80 or anywhere else: point the
        // URL at the listener with connectTo, as a fallback address does, and check the port it would use.
        let listener = try PlainListener()
        let client = HTTPClient()
        defer { client.shutdown() }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(Self.token)")
        let url = try #require(HTTPURL("https://127.0.0.1/login"))
        #expect(url.port == 443)
        let request = HTTPRequest(
            url: url, headers: headers, timeouts: TimeoutPolicy(connect: .seconds(10), idle: .seconds(10), total: .seconds(20)),
            connectTo: HostAddress(host: "127.0.0.1", port: listener.port)
        )
        let error = await #expect(throws: CourierError.self) { try await client.execute(request) }
        #expect(Self.isTLSFailure(error), "\(String(describing: error))")
        Self.expectNothingInClear(listener.everything)
    }

    static func isTLSFailure(_ error: CourierError?) -> Bool {
        guard let kind = error?.kind else { return false }
        return kind == .tlsHandshake || kind == .tlsCertificate
    }

    /// No request line, no header, no token: at most a TLS record (a handshake record starts with 0x16).
    static func expectNothingInClear(_ bytes: [UInt8], sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains(token), "the token reached the listener in clear", sourceLocation: sourceLocation)
        #expect(!text.contains("HTTP/1.1"), "a request line reached the listener", sourceLocation: sourceLocation)
        #expect(!text.contains("Authorization"), "a header reached the listener", sourceLocation: sourceLocation)
        if let first = bytes.first { #expect(first == 0x16, "not a TLS record: \(first)", sourceLocation: sourceLocation) }
    }
}

/// A listener that records the first bytes of each connection, then answers like a plain HTTP server that was
/// sent something it does not understand.
final class PlainListener: Sendable {
    private final class Log: Sendable {
        let chunks = Mutex<[[UInt8]]>([])
    }

    private let server: ScriptedServer
    private let log = Log()

    init() throws {
        let log = self.log
        server = try ScriptedServer { connection in
            let bytes = connection.readAvailable(waitingUpTo: 3)
            log.chunks.withLock { $0.append(bytes) }
            connection.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
        }
    }

    /// Every byte received, over all connections.
    var everything: [UInt8] { log.chunks.withLock { $0.flatMap { $0 } } }
    var port: Int { server.port }
}
