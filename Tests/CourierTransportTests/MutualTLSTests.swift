import CourierCore
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

@testable import CourierTransport

/// Client certificates (mutual TLS) against servers that require one: OpenSSL's own `s_server -Verify` for what a
/// server refuses (each refusal its own alert and message) and Python's `ssl` server (the same OpenSSL, with a
/// route that names the certificate each connection presented) for pooling. Local problems with the certificate
/// or key fail before any connection, naming the file.
@Suite(.timeLimit(.minutes(2)))
struct MutualTLSTests {
    static let pki = TestPKI.shared

    static func identity(_ name: String, key: String? = nil, password: String? = nil) -> TLSPolicy {
        TLSPolicy(
            caFile: pki.rootCA,
            clientIdentity: ClientIdentity(certificateFile: pki.chain(name), keyFile: key ?? pki.key(name), keyPassword: password)
        )
    }

    static func failure(_ url: String, tls: TLSPolicy, client: HTTPClient? = nil) async -> CourierError? {
        do {
            _ = try await TLSTests.fetch(url, tls: tls, client: client)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - What a server accepts and refuses

    @Test(arguments: ["1.2", "1.3"])
    func theRightCertificateIsAccepted(_ version: String) async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA, maxVersion: version)
        let response = try await TLSTests.fetch(server.url, tls: Self.identity("client"))
        #expect(response.status == 200)
        #expect(response.metrics.tlsSession?.version == "TLSv\(version)")
    }

    @Test func anEncryptedKeyWithItsPasswordIsAccepted() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let tls = Self.identity("client", key: Self.pki.encryptedClientKey, password: Self.pki.clientKeyPassword)
        let response = try await TLSTests.fetch(server.url, tls: tls)
        #expect(response.status == 200)
    }

    @Test func noCertificateIsRefusedWithCertificateRequired() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let error = try #require(await Self.failure(server.url, tls: TLSTests.trustTestRoot))
        #expect(error.kind == .tlsHandshake)
        #expect(error.message == "the server requires a client certificate and none was given (TLS alert certificate_required)")
    }

    @Test func noCertificateIsRefusedOverTLS12Too() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA, maxVersion: "1.2")
        let error = try #require(await Self.failure(server.url, tls: TLSTests.trustTestRoot))
        #expect(error.kind == .tlsHandshake)
        #expect(error.message == "the server requires a client certificate and none was given (TLS alert handshake_failure)")
    }

    @Test func aCertificateFromAnotherCAIsRefusedWithUnknownCA() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let error = try #require(await Self.failure(server.url, tls: Self.identity("client-otherca")))
        #expect(error.kind == .tlsHandshake)
        #expect(error.message == "the server rejected the client certificate '/CN=Courier Test Client/O=Courier tests' (TLS alert unknown_ca)")
    }

    @Test func anExpiredCertificateIsRefusedSayingWhenItExpired() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let error = try #require(await Self.failure(server.url, tls: Self.identity("client-expired")))
        #expect(error.kind == .tlsHandshake)
        let message = error.message
        #expect(message.hasPrefix("the server rejected the client certificate '/CN=Courier Test Client/O=Courier tests': it expired on 20"))
        #expect(message.hasSuffix("Z (TLS alert certificate_expired)"))
        let reason = try #require((error.cause as? TLSError)?.reason)
        guard case .clientCertificateRejected(let alert, _, let expiredOn?) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(alert == "certificate_expired")
        // Yesterday, as the PKI made it: the date is read from the certificate, not the server.
        #expect(expiredOn < WallClockText.now)
    }

    // MARK: - Local problems, before any connection

    @Test func aKeyThatIsNotTheCertificatesFailsLocallyNamingBothFiles() async throws {
        // No server: the port is closed, so an attempt to connect would fail with another kind (connect).
        let closed = try ClosedPort()
        let url = "https://localhost:\(closed.port)/"
        let error = try #require(await Self.failure(url, tls: Self.identity("client", key: Self.pki.key("client2"))))
        #expect(error.kind == .tlsClientCertificate)
        #expect(error.message == "the client key '\(Self.pki.key("client2"))' does not belong to the client certificate '\(Self.pki.chain("client"))'")
    }

    @Test func anEncryptedKeyWithoutItsPasswordFailsLocally() async throws {
        let closed = try ClosedPort()
        let url = "https://localhost:\(closed.port)/"
        let error = try #require(await Self.failure(url, tls: Self.identity("client", key: Self.pki.encryptedClientKey)))
        #expect(error.kind == .tlsClientCertificate)
        #expect(error.message == "the client key '\(Self.pki.encryptedClientKey)' is encrypted and no password was given")
    }

    @Test func aWrongPasswordFailsLocallyAndIsNeverShown() async throws {
        let closed = try ClosedPort()
        let url = "https://localhost:\(closed.port)/"
        let tls = Self.identity("client", key: Self.pki.encryptedClientKey, password: "not the password")
        let error = try #require(await Self.failure(url, tls: tls))
        #expect(error.kind == .tlsClientCertificate)
        #expect(error.message == "the password does not decrypt the client key '\(Self.pki.encryptedClientKey)'")
        #expect(!"\(error)".contains("not the password"))
        #expect(!"\(tls)".contains("not the password"))
        #expect(!String(reflecting: tls).contains("not the password"))
        var dumped = ""
        dump(tls, to: &dumped)
        #expect(!dumped.contains("not the password"))
    }

    @Test func aMissingCertificateFileFailsLocallyNamingIt() async throws {
        let closed = try ClosedPort()
        let url = "https://localhost:\(closed.port)/"
        let tls = TLSPolicy(caFile: Self.pki.rootCA, clientIdentity: ClientIdentity(certificateFile: "/nonexistent/client.pem"))
        let error = try #require(await Self.failure(url, tls: tls))
        #expect(error.kind == .tlsClientCertificate)
        #expect(error.message.contains("'/nonexistent/client.pem'"))
    }

    // MARK: - Pooling

    @Test func twoIdentitiesNeverShareAConnection() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(clientCA: Self.pki.clientRootCA))
        let client = HTTPClient()
        defer { client.shutdown() }
        var seen: [String] = []
        for name in ["client", "client2", "client", "client2"] {
            let response = try await TLSTests.fetch(peer.url("/client-cert"), tls: Self.identity(name), client: client)
            seen.append(String(decoding: response.body, as: UTF8.self))
        }
        #expect(seen == ["Courier Test Client", "Courier Test Client Two", "Courier Test Client", "Courier Test Client Two"])
        // One connection per identity, each reused by its own identity's second request.
        let count = try await TLSTests.fetch(peer.url("/connections"), tls: Self.identity("client"), client: client)
        #expect(String(decoding: count.body, as: UTF8.self) == #"{"accepted": 2}"#)
        #expect(client.openConnectionCount == 2)
    }
}

/// The current UTC time in the form ``TLSCertificateSummary`` dates take (`2026-11-29T10:00:00Z`), for comparing them.
enum WallClockText {
    static var now: String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date())
    }
}
