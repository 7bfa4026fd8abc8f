import CourierCore
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

@testable import CourierTransport

/// Requests through real proxies on 127.0.0.1: squid (absolute form, CONNECT, Basic authentication; its access
/// log says what it saw) and microsocks (SOCKS5, with and without a username and password), to the tests' own
/// HTTP and TLS peers (whose `/echo` says what the origin saw).
@Suite(.timeLimit(.minutes(1)))
struct ProxyTests {
    static let timeouts = TimeoutPolicy(connect: .seconds(5), idle: .seconds(5), total: .seconds(10))
    static let trustTestRoot = TLSPolicy(caFile: TestPKI.shared.rootCA)

    static func request(_ url: String, proxy: String, headers: [(String, String)] = []) throws -> HTTPRequest {
        var request = HTTPRequest(url: try #require(HTTPURL(url)), timeouts: timeouts, tls: trustTestRoot)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.proxy = try ProxyServer.parse(proxy)
        return request
    }

    /// The header fields the origin's `/echo` saw, by lower-cased name.
    static func originSaw(_ response: HTTPResponse) throws -> [String: String] {
        let document = try json(response.body)
        let pairs = try #require(document["headers"] as? [[String]])
        return Dictionary(pairs.map { ($0[0].lowercased(), $0[1]) }, uniquingKeysWith: { a, _ in a })
    }

    static func failure(_ client: HTTPClient, _ request: HTTPRequest) async -> CourierError? {
        do {
            _ = try await client.execute(request)
            return nil
        } catch {
            return error
        }
    }

    @Test func plainHTTPGoesToSquidInAbsoluteFormWithProxyAuthorizationForSquidOnly() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start()
        let client = HTTPClient()
        defer { client.shutdown() }
        let request = try Self.request(
            origin.url("/echo"), proxy: squid.url(username: "alice", password: "s3cret"), headers: [("Authorization", "Bearer origin-token")]
        )
        let response = try await client.execute(request)
        #expect(response.status == 200)
        let saw = try Self.originSaw(response)
        #expect(saw["proxy-authorization"] == nil)
        #expect(saw["authorization"] == "Bearer origin-token")
        let log = await squid.accessLog()
        #expect(log.first == "GET \(origin.url("/echo")) 200 alice [Basic YWxpY2U6czNjcmV0] [Bearer origin-token]")
    }

    @Test func httpsGoesThroughOneVerifiedTunnelReusedForItsOrigin() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        let url = origin.localhostURL("/echo")
        let request = try Self.request(url, proxy: squid.url(username: "alice", password: "s3cret"), headers: [("Authorization", "Bearer origin-token")])
        for _ in 0..<3 {
            let response = try await client.execute(request)
            #expect(response.status == 200)
            let saw = try Self.originSaw(response)
            #expect(saw["proxy-authorization"] == nil)
            #expect(saw["authorization"] == "Bearer origin-token")
            #expect(response.metrics.tlsSession?.peerCertificate?.subject.contains("CN=localhost") == true)
        }
        let connections = try await client.execute(try Self.request(origin.localhostURL("/connections"), proxy: squid.url(username: "alice", password: "s3cret")))
        #expect(try json(connections.body)["accepted"] as? Int == 1)
        client.shutdown()
        // squid logs a tunnel when it closes: one CONNECT, naming the host as written, without the origin's credentials.
        let log = await squid.accessLog()
        #expect(log == ["CONNECT localhost:\(origin.port) 200 alice [Basic YWxpY2U6czNjcmV0] [-]"])
    }

    @Test func aWrongHostCertificateBehindTheTunnelStillFails() async throws {
        let squid = try await SquidProxy.start()
        let origin = try await PythonPeer.start(tls: TLSPeerOptions(chain: "wronghost"))
        let client = HTTPClient()
        defer { client.shutdown() }
        let error = try #require(await Self.failure(client, try Self.request(origin.url("/bytes/1"), proxy: squid.url())))
        #expect(error.kind == .tlsCertificate)
        #expect(error.message.contains("other.example.com"))
    }

    @Test func squidsFourOhSevenIsATunnelFailureSayingWhatItAskedFor() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        let none = try #require(await Self.failure(client, try Self.request(origin.url("/bytes/1"), proxy: squid.url())))
        #expect(none.kind == .proxyTunnel)
        #expect(none.message.contains("407"))
        #expect(none.message.contains("Basic"))
        #expect(none.message.contains("none were given"))
        let wrong = try #require(await Self.failure(client, try Self.request(origin.url("/bytes/1"), proxy: squid.url(username: "alice", password: "nope"))))
        #expect(wrong.kind == .proxyTunnel)
        #expect(wrong.message.contains("refused the credentials"))
        #expect(!wrong.description.contains("nope"))
        // Plain http gets squid's 407 as the response (curl does the same): it is the proxy's answer, not a tunnel's.
        let plain = try await client.execute(try Self.request(origin.url("/bytes/1").replacingOccurrences(of: "https:", with: "http:"), proxy: squid.url()))
        #expect(plain.status == 407)
    }

    @Test func aProxyThatRefusesIsAnErrorNamingItAndNothingGoesDirect() async throws {
        let closed = try ClosedPort()
        let origin = try await PythonPeer.start()
        let client = HTTPClient()
        defer { client.shutdown() }
        let error = try #require(await Self.failure(client, try Self.request(origin.url("/bytes/1"), proxy: "http://127.0.0.1:\(closed.port)")))
        #expect(error.kind == .connect)
        #expect(error.message.contains("proxy http://127.0.0.1:\(closed.port)"))
        let unresolved = try #require(await Self.failure(client, try Self.request(origin.url("/bytes/1"), proxy: "http://proxy.invalid:3128")))
        #expect(unresolved.kind == .proxyResolve)
        #expect(unresolved.message.contains("proxy.invalid"))
        // The origin was never contacted directly.
        let direct = try await client.execute(HTTPRequest(url: try #require(HTTPURL(origin.url("/connections"))), timeouts: Self.timeouts))
        #expect(try json(direct.body)["accepted"] as? Int == 1)
    }

    @Test func socks5WithAndWithoutAuthenticationCarriesHTTPAndHTTPS() async throws {
        let open = try await MicroSocksProxy.start()
        let authenticated = try await MicroSocksProxy.start(username: "bob", password: "pw")
        let plain = try await PythonPeer.start()
        let secure = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        let viaOpen = try await client.execute(try Self.request(plain.url("/echo"), proxy: open.url()))
        #expect(viaOpen.status == 200)
        #expect(try Self.originSaw(viaOpen)["proxy-authorization"] == nil)
        // socks5h: the proxy resolves `localhost`; TLS is verified against it.
        let remote = try await client.execute(try Self.request(secure.localhostURL("/echo"), proxy: authenticated.url(remoteResolution: true, username: "bob", password: "pw")))
        #expect(remote.status == 200)
        let local = try await client.execute(try Self.request(secure.url("/bytes/10"), proxy: authenticated.url(username: "bob", password: "pw")))
        #expect(local.body.count == 10)
        let refused = try #require(await Self.failure(client, try Self.request(plain.url("/echo"), proxy: authenticated.url(username: "bob", password: "wrong"))))
        #expect(refused.kind == .socks)
        #expect(!refused.description.contains("wrong"))
        let closed = try ClosedPort()
        let unreachable = try #require(await Self.failure(client, try Self.request(closed.url("/"), proxy: open.url())))
        #expect(unreachable.kind == .socks)
        #expect(unreachable.message.contains("connection refused") || unreachable.message.contains("general SOCKS server failure"))
    }

    @Test func tunnelsArePooledByProxyAndOriginAndNeverSharedAcrossOrigins() async throws {
        let socks = try await MicroSocksProxy.start()
        let origin = try await PythonPeer.start()
        let client = HTTPClient()
        defer { client.shutdown() }
        // The same origin by two names: two tunnels, each reused for its own origin.
        for _ in 0..<2 {
            _ = try await client.execute(try Self.request(origin.url("/bytes/1"), proxy: socks.url()))
            _ = try await client.execute(try Self.request(origin.localhostURL("/bytes/1"), proxy: socks.url()))
        }
        #expect(client.openConnectionCount == 2)
        let count = try await client.execute(try Self.request(origin.url("/connections"), proxy: socks.url()))
        #expect(try json(count.body)["accepted"] as? Int == 2)
        // Direct to the same origin is a third connection, not one of the tunnels.
        _ = try await client.execute(HTTPRequest(url: try #require(HTTPURL(origin.url("/bytes/1"))), timeouts: Self.timeouts))
        #expect(client.openConnectionCount == 3)
    }

    @Test func anHTTPSProxyCarriesTLSInsideTLSVerifiedAtBothHops() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let front = try await TLSFront.start(target: squid.port)
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let plain = try await PythonPeer.start()
        let client = HTTPClient()
        defer { client.shutdown() }
        var proxy = try ProxyServer.parse("https://alice:s3cret@localhost:\(front.port)")
        proxy.caFile = TestPKI.shared.rootCA
        for url in [origin.localhostURL("/echo"), origin.localhostURL("/echo"), plain.url("/echo")] {
            var request = try Self.request(url, proxy: "http://unused")
            request.proxy = proxy
            let response = try await client.execute(request)
            #expect(response.status == 200)
            #expect(try Self.originSaw(response)["proxy-authorization"] == nil)
        }
        let log = await squid.accessLog(atLeast: 1)
        #expect(log.contains("GET \(plain.url("/echo")) 200 alice [Basic YWxpY2U6czNjcmV0] [-]"))
        // The proxy's own certificate is verified: the system store does not trust the test CA.
        proxy.caFile = nil
        var untrusted = try Self.request(origin.localhostURL("/echo"), proxy: "http://unused")
        untrusted.proxy = proxy
        let error = try #require(await Self.failure(client, untrusted))
        #expect(error.kind == .tlsHandshake)
        #expect(error.message.contains("the proxy https://alice@localhost:\(front.port)"))
    }
}
