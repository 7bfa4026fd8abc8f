import CourierCore
import CourierPosix
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

@testable import CourierTransport

/// HTTPS against real TLS servers on 127.0.0.1 (Python's `ssl` over the system's OpenSSL) presenting
/// certificates made for the test run (``TestPKI``): only the good chain passes, and each bad one fails with
/// its own kind and message.
@Suite(.timeLimit(.minutes(2)))
struct TLSTests {
    static let pki = TestPKI.shared
    static let trustTestRoot = TLSPolicy(caFile: pki.rootCA)

    static func fetch(
        _ url: String, tls: TLSPolicy? = trustTestRoot, client: HTTPClient? = nil, connectTo: HostAddress? = nil
    ) async throws(CourierError) -> HTTPResponse {
        let owned = client == nil
        let client = client ?? HTTPClient()
        defer { if owned { client.shutdown() } }
        guard let parsed = HTTPURL(url) else { throw CourierError(.policy, "bad test URL \(url)") }
        return try await client.execute(HTTPRequest(
            url: parsed, timeouts: TimeoutPolicy(connect: .seconds(5), idle: .seconds(5), total: .seconds(10)),
            connectTo: connectTo, tls: tls
        ))
    }

    static func failure(_ url: String, tls: TLSPolicy? = trustTestRoot) async -> CourierError? {
        do {
            _ = try await fetch(url, tls: tls)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - The good chain

    @Test func aVerifiedSessionCarriesTheRequestAndSaysWhatItNegotiated() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let response = try await Self.fetch(peer.url("/bytes/3000"))
        #expect(response.status == 200)
        #expect(response.body == (0..<3000).map { UInt8($0 % 251) })
        let session = try #require(response.metrics.tlsSession)
        #expect(session.version == "TLSv1.3")
        #expect(session.alpn == "http/1.1")
        #expect(!session.resumed)
        #expect(!session.cipher.isEmpty)
        let leaf = try #require(session.peerCertificate)
        #expect(leaf.subject.contains("CN=localhost"))
        #expect(leaf.issuer.contains("CN=Courier Test Intermediate"))
        #expect(leaf.names == ["localhost", "127.0.0.1", "0:0:0:0:0:0:0:1"])
        #expect(leaf.pin == Self.pki.pins["good"])
        #expect(response.metrics.tls != nil)
    }

    @Test func localhostWorksWhenItResolvesToIPv6FirstAndTheServerListensOnIPv4Only() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let response = try await Self.fetch(peer.localhostURL("/sni"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "localhost")
    }

    @Test func noSNIIsSentForAnIPLiteral() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let response = try await Self.fetch(peer.url("/sni"))
        #expect(String(decoding: response.body, as: UTF8.self) == "none")
    }

    @Test func aFallbackAddressKeepsTheOriginalHostForSNIAndVerification() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        // The URL names localhost; the socket goes to 127.0.0.1 (a fallback address). The certificate must match
        // localhost, and SNI must say localhost, not the address.
        let response = try await Self.fetch(
            "https://localhost:\(peer.port)/sni", connectTo: HostAddress(host: "127.0.0.1", port: peer.port)
        )
        #expect(String(decoding: response.body, as: UTF8.self) == "localhost")
    }

    @Test func theSystemTrustStoreDoesNotTrustTheTestRoot() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let error = await Self.failure(peer.url("/"), tls: nil)
        #expect(error?.kind == .tlsCertificate)
        #expect(error?.message.contains("not trusted") == true, "\(String(describing: error))")
    }

    @Test func anUnreadableCAFileIsAHandshakeErrorNamingTheFile() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let error = await Self.failure(peer.url("/"), tls: TLSPolicy(caFile: "/nonexistent/ca.pem"))
        #expect(error?.kind == .tlsHandshake)
        #expect(error?.message.contains("/nonexistent/ca.pem") == true, "\(String(describing: error))")
    }

    // MARK: - Bad chains, each with its own message

    @Test(arguments: [
        ("expired", "expired on"),
        ("notyet", "is not valid before"),
        ("wronghost", "does not match '127.0.0.1'; it is for other.example.com"),
        ("selfsigned", "is self-signed"),
        ("untrusted", "not trusted"),
        ("incomplete", "not trusted"),
        ("nonca", "is not a CA"),
        ("clientauth", "may not be used by a TLS server"),
    ])
    func aBadChainFailsWithItsOwnMessage(_ chain: String, _ expected: String) async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(chain: chain))
        let error = try #require(await Self.failure(peer.url("/")))
        #expect(error.kind == .tlsCertificate, "\(error)")
        #expect(error.message.contains(expected), "\(chain): \(error.message)")
        #expect(error.cause is TLSError)
    }

    @Test func anExpiredCertificateSaysWhenItExpired() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(chain: "expired"))
        let error = try #require(await Self.failure(peer.url("/")))
        let yesterday = Date().addingTimeInterval(-86_400)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        #expect(error.message.contains(formatter.string(from: yesterday)), "\(error.message)")
    }

    @Test func verificationOffAcceptsABadChainButStillChecksPins() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(chain: "selfsigned"))
        let insecure = TLSPolicy(verifiesPeer: false)
        let response = try await Self.fetch(peer.url("/bytes/10"), tls: insecure)
        #expect(response.status == 200)
        var pinned = insecure
        pinned.pins = [try #require(TLSPolicy.Pin(Self.pki.pins["backup"]!))]
        let error = await Self.failure(peer.url("/bytes/10"), tls: pinned)
        #expect(error?.kind == .tlsPin)
    }

    // MARK: - Versions

    @Test func aServerThatSpeaksOnlyTLS10Or11IsRefused() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(minVersion: "1.0", maxVersion: "1.1"))
        let error = try #require(await Self.failure(peer.url("/")))
        #expect(error.kind == .tlsHandshake, "\(error)")
        #expect(error.message.contains("share no TLS version"), "\(error.message)")
    }

    @Test func aTLS12ServerIsAcceptedByDefaultAndRefusedWithAMinimumOf13() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(maxVersion: "1.2"))
        let response = try await Self.fetch(peer.url("/bytes/5"))
        #expect(response.metrics.tlsSession?.version == "TLSv1.2")
        var strict = Self.trustTestRoot
        strict.minVersion = .tls13
        let error = try #require(await Self.failure(peer.url("/"), tls: strict))
        #expect(error.kind == .tlsHandshake, "\(error)")
    }

    // MARK: - Pins

    @Test(arguments: ["good", "intermediate", "root"])
    func aPinOfAnyKeyInTheVerifiedChainIsAccepted(_ which: String) async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        var policy = Self.trustTestRoot
        policy.pins = [try #require(TLSPolicy.Pin(Self.pki.pins[which]!)), try #require(TLSPolicy.Pin(Self.pki.pins["backup"]!))]
        let response = try await Self.fetch(peer.url("/bytes/5"), tls: policy)
        #expect(response.status == 200)
    }

    @Test func aWrongPinIsRefusedAndTheErrorListsWhatTheChainOffered() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        var policy = Self.trustTestRoot
        policy.pins = [try #require(TLSPolicy.Pin(Self.pki.pins["backup"]!))]
        let error = try #require(await Self.failure(peer.url("/"), tls: policy))
        #expect(error.kind == .tlsPin)
        #expect(error.message.contains(Self.pki.pins["good"]!), "\(error.message)")
        #expect(error.message.contains(Self.pki.pins["backup"]!), "\(error.message)")
    }

    @Test func theRightPinDoesNotExcuseAWrongHost() async throws {
        // The wronghost chain is issued by the pinned intermediate, but names another host.
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(chain: "wronghost"))
        var policy = Self.trustTestRoot
        policy.pins = [try #require(TLSPolicy.Pin(Self.pki.pins["intermediate"]!))]
        let error = try #require(await Self.failure(peer.url("/"), tls: policy))
        #expect(error.kind == .tlsCertificate, "\(error)")
    }

    @Test func aRequestsTLSSettingsStayWithItsOrigin() async throws {
        // 127.0.0.1 redirects to localhost (another origin, the same server). The request trusts the test root;
        // the client does not: the redirect's target is verified with the client's settings and fails.
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let target = peer.localhostURL("/bytes/3").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let redirecting = peer.url("/redirect-to?status=302&location=\(target)")
        let error = await Self.failure(redirecting)
        #expect(error?.kind == .tlsCertificate, "\(String(describing: error))")
        // A client that trusts the root itself follows it.
        var configuration = HTTPClientConfiguration()
        configuration.tls = Self.trustTestRoot
        let trusting = HTTPClient(configuration: configuration)
        defer { trusting.shutdown() }
        let response = try await Self.fetch(redirecting, client: trusting)
        #expect(response.status == 200)
        #expect(response.metrics.redirects == 1)
    }

    // MARK: - Pooling and resumption

    @Test func pooledTLSConnectionsAreReused() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        for i in 0..<5 {
            let response = try await Self.fetch(peer.url("/bytes/\(100 + i)"), client: client)
            #expect(response.body.count == 100 + i)
            #expect(response.metrics.reusedConnection == (i > 0))
        }
        let count = try await Self.fetch(peer.url("/connections"), client: client)
        #expect(String(decoding: count.body, as: UTF8.self) == #"{"accepted": 1}"#)
    }

    @Test func theSecondConnectionResumesTheFirstSession() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        let first = try await Self.fetch(peer.url("/close"), client: client)
        #expect(first.metrics.tlsSession?.resumed == false)
        let second = try await Self.fetch(peer.url("/bytes/10"), client: client)
        #expect(second.metrics.reusedConnection == false)
        #expect(second.metrics.tlsSession?.resumed == true)
        #expect(second.metrics.tls != nil)
    }

    @Test func aTLS12SessionIsResumedToo() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(maxVersion: "1.2"))
        let client = HTTPClient()
        defer { client.shutdown() }
        _ = try await Self.fetch(peer.url("/close"), client: client)
        let second = try await Self.fetch(peer.url("/bytes/10"), client: client)
        #expect(second.metrics.tlsSession?.version == "TLSv1.2")
        #expect(second.metrics.tlsSession?.resumed == true)
    }

    @Test func withoutTicketsEveryConnectionIsAFullHandshake() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(tickets: 0))
        let client = HTTPClient()
        defer { client.shutdown() }
        _ = try await Self.fetch(peer.url("/close"), client: client)
        let second = try await Self.fetch(peer.url("/bytes/10"), client: client)
        #expect(second.metrics.tlsSession?.resumed == false)
    }

    @Test func differentTLSSettingsNeverShareAConnection() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        var pinned = Self.trustTestRoot
        pinned.pins = [try #require(TLSPolicy.Pin(Self.pki.pins["good"]!))]
        _ = try await Self.fetch(peer.url("/bytes/1"), tls: Self.trustTestRoot, client: client)
        let other = try await Self.fetch(peer.url("/bytes/1"), tls: pinned, client: client)
        #expect(other.metrics.reusedConnection == false)
        #expect(client.openConnectionCount == 2)
    }

    @Test func aServerThatClosesAnIdleTLSConnectionIsNoticedBeforeReuse() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let client = HTTPClient()
        defer { client.shutdown() }
        let first = try await Self.fetch(peer.url("/close-silently"), client: client)
        #expect(String(decoding: first.body, as: UTF8.self) == "bye")
        try await Task.sleep(for: .milliseconds(200))  // let the close arrive
        let second = try await Self.fetch(peer.url("/bytes/10"), client: client)
        #expect(second.status == 200)
        #expect(second.metrics.reusedConnection == false)
        #expect(second.metrics.attempts == 1, "the stale connection was noticed before the request, not by a retry")
    }

    /// A connector and the pool key for `peer` over TLS with the test root, to make connections by hand.
    static func directConnection(to peer: PythonPeer) -> (Connector, PoolKey) {
        let key = PoolKey(
            scheme: "https", host: "127.0.0.1", port: peer.port, connectHost: "127.0.0.1", connectPort: peer.port,
            tls: trustTestRoot
        )
        return (Connector(resolver: .shared, loops: .shared), key)
    }

    @Test func sessionTicketsWaitingOnAnIdleConnectionAreNotUnsolicitedData() async throws {
        // A TLS 1.3 server sends its session tickets after the handshake; nothing has read them yet when the pool
        // probes the idle connection. The probe must take them for what they are, not for unsolicited bytes.
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(tickets: 2))
        let (connector, key) = Self.directConnection(to: peer)
        let (stream, _) = try await connector.connect(key, deadline: .now() + .seconds(5))
        defer { stream.close() }
        // Wait for the tickets to arrive (a signal, not a guessed delay: a loaded machine sends them late).
        let deadline = ContinuousClock.now + .seconds(10)
        while stream.isQuietSinceLastRead(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!stream.isQuietSinceLastRead(), "bytes are waiting on the socket")
        #expect(!stream.hasPendingInput())
        #expect(!stream.isClosedByPeer())
        // The session is usable after the probe, and the tickets it absorbed made the session resumable.
        try await stream.write(Array("GET /bytes/5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), deadline: .now() + .seconds(5), idle: nil)
        var response: [UInt8] = []
        while !String(decoding: response, as: UTF8.self).hasSuffix("\r\n\r\n\u{0}\u{1}\u{2}\u{3}\u{4}") {
            let bytes = try await stream.read(maxBytes: 4096, deadline: .now() + .seconds(5), idle: nil)
            try #require(!bytes.isEmpty)
            response += bytes
        }
        #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        let second = try await connector.connect(key, deadline: .now() + .seconds(5)).0
        defer { second.close() }
        #expect(second.tlsInfo?.resumed == true)
    }

    @Test func unsolicitedPlaintextOnAnIdleTLSConnectionIsPendingInput() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let (connector, key) = Self.directConnection(to: peer)
        let (stream, _) = try await connector.connect(key, deadline: .now() + .seconds(5))
        defer { stream.close() }
        // A response nobody reads is application data waiting on the idle connection, as a server's unsolicited
        // bytes would be: the probe must report it (the connection is then not reused).
        try await stream.write(Array("GET /bytes/5 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), deadline: .now() + .seconds(5), idle: nil)
        try await Task.sleep(for: .milliseconds(300))
        #expect(stream.hasPendingInput())
    }

    // MARK: - Truncation

    @Test func aCloseDelimitedBodyEndedWithoutCloseNotifyIsATruncation() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let error = try #require(await Self.failure(peer.url("/close-delimited/5000?notify=0")))
        #expect(error.kind == .protocol, "\(error)")
        #expect(error.message.contains("close_notify"), "\(error.message)")
    }

    @Test func aCloseDelimitedBodyEndedWithCloseNotifyIsComplete() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let response = try await Self.fetch(peer.url("/close-delimited/5000?notify=1"))
        #expect(response.body == (0..<5000).map { UInt8($0 % 251) })
    }
}
