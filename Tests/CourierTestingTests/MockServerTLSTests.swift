import CourierCore
import CourierTesting
import CourierTLS
import CourierTransport
import Testing

/// MockServer over TLS with the CA it made: trusted, it serves; not trusted, the client refuses it.
@Suite(.timeLimit(.minutes(1))) struct MockServerTLSTests {
    @Test func aClientTrustingTheMadeCAConnectsAndReusesTheConnection() async throws {
        try await withMockServer(tls: true) { server in
            server.on(.get, "*") { request in .text("secure \(request.path)") }
            let client = HTTPClient()
            defer { client.shutdown() }
            let policy = try #require(server.trustingPolicy)
            let first = try await client.execute(HTTPRequest(url: server.url("/one"), tls: policy))
            let second = try await client.execute(HTTPRequest(url: server.url("/two", host: "localhost"), tls: policy))
            #expect(String(decoding: first.body, as: UTF8.self) == "secure /one")
            #expect(String(decoding: second.body, as: UTF8.self) == "secure /two")
            #expect(server.baseURL.hasPrefix("https://"))
            #expect(server.requests.map(\.connectionID) == [1, 2] || server.requests.map(\.connectionID) == [1, 1])
            #expect(server.certificateAuthorityPEM?.hasPrefix("-----BEGIN CERTIFICATE-----") == true)
        }
    }

    @Test func keepAliveWorksOverTLS() async throws {
        try await withMockServer(tls: true) { server in
            server.on(.get, "*") { _ in .text("ok") }
            let client = HTTPClient()
            defer { client.shutdown() }
            let policy = try #require(server.trustingPolicy)
            for _ in 0..<3 { _ = try await client.execute(HTTPRequest(url: server.url("/k"), tls: policy)) }
            #expect(server.requests.map(\.connectionID) == [1, 1, 1])
            #expect(server.requests.map(\.indexOnConnection) == [0, 1, 2])
        }
    }

    @Test func aClientThatDoesNotTrustTheCARefusesTheServer() async throws {
        try await withMockServer(tls: true) { server in
            try server.enqueue(.text("must not arrive"))
            let client = HTTPClient()
            defer { client.shutdown() }
            let url = try server.url("/")
            do {
                _ = try await client.execute(HTTPRequest(url: url))
                Issue.record("the handshake succeeded without trusting the CA")
            } catch {
                #expect((error as? CourierError)?.kind == .tlsCertificate, "\(error)")
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func theCAFileIsRemovedAtShutdown() async throws {
        let server = try MockServer(tls: true)
        let path = try #require(server.certificateAuthorityPath)
        #expect(FileProbe.exists(path))
        await server.shutdown()
        #expect(!FileProbe.exists(path))
    }
}
