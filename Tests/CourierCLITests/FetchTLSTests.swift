import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch` over HTTPS: --cacert, --pin, -k, the report's `tls` object, -v, and curl's exit codes.
@Suite(.timeLimit(.minutes(2)), .onBlockingThreads) struct FetchTLSTests {
    static let pki = TestPKI.shared

    func report(_ stderr: String) throws -> [String: Any] {
        let line = try #require(stderr.split(separator: "\n").last { $0.hasPrefix("{") })
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func withTheTestCAAnHTTPSFetchSucceedsAndReportsItsSession() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let result = try await CourierProcess.run(["fetch", "--cacert", Self.pki.rootCA, peer.url("/bytes/20"), "--json-report", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Array(result.stdout.utf8) == (0..<20).map { UInt8($0 % 251) })
        let line = try report(result.stderr)
        let tls = try #require(line["tls"] as? [String: Any])
        #expect(tls["version"] as? String == "TLSv1.3")
        #expect(tls["alpn"] as? String == "http/1.1")
        #expect(tls["resumed"] as? Bool == false)
        #expect((tls["cipher"] as? String)?.isEmpty == false)
        let timings = try #require(line["timings"] as? [String: Any])
        #expect((timings["tls"] as? Double ?? 0) > 0)
    }

    @Test func plainHTTPReportsANullTLSObject() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let result = try await CourierProcess.run(["fetch", peer.url("/bytes/2"), "--json-report", "-"])
        #expect(try report(result.stderr)["tls"] is NSNull)
    }

    @Test func withoutTheCAItExits60() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let result = try await CourierProcess.run(["fetch", peer.url("/bytes/20")])
        #expect(result.status == 60, "\(result.stderr)")
        #expect(result.stderr.contains("tls-certificate"))
        #expect(result.stdout.isEmpty)
    }

    @Test func theSystemStoreHonoursSSLCertFileAndSSLCertDir() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let viaFile = try await CourierProcess.run(["fetch", peer.url("/bytes/3")], environment: ["SSL_CERT_FILE": Self.pki.rootCA])
        #expect(viaFile.status == 0, "\(viaFile.stderr)")
        // SSL_CERT_DIR: a folder of CA files named by their subject hash (what `openssl rehash` makes).
        let dir = NSTemporaryDirectory() + "courier-certdir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let hash = try Self.subjectHash(Self.pki.rootCA)
        try FileManager.default.copyItem(atPath: Self.pki.rootCA, toPath: dir + "/\(hash).0")
        let viaDir = try await CourierProcess.run(
            ["fetch", peer.url("/bytes/3")], environment: ["SSL_CERT_DIR": dir, "SSL_CERT_FILE": "/nonexistent"]
        )
        #expect(viaDir.status == 0, "\(viaDir.stderr)")
    }

    /// `openssl x509 -subject_hash`: the name OpenSSL looks a CA up by in a certificate folder.
    static func subjectHash(_ pem: String) throws -> String {
        let process = try ChildProcess("/usr/bin/openssl", ["x509", "-noout", "-subject_hash", "-in", pem], stdout: .pipe)
        let text = try PipeReader.readToEnd(process.standardOutput!)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aWrongPinExits90AndTheRightOneIsAccepted() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let wrong = try await CourierProcess.run(["fetch", "--cacert", Self.pki.rootCA, "--pin", Self.pki.pins["backup"]!, peer.url("/")])
        #expect(wrong.status == 90, "\(wrong.stderr)")
        #expect(wrong.stderr.contains(Self.pki.pins["good"]!))
        let right = try await CourierProcess.run([
            "fetch", "--cacert", Self.pki.rootCA, "--pin", Self.pki.pins["backup"]!, "--pin", Self.pki.pins["good"]!,
            peer.url("/bytes/3"),
        ])
        #expect(right.status == 0, "\(right.stderr)")
    }

    @Test func aMalformedPinOrAMissingCAFileIsAUsageError() async throws {
        let badPin = try await CourierProcess.run(["fetch", "--pin", "sha256/short", "https://127.0.0.1:1/"])
        #expect(badPin.status == 64 || badPin.status == 2, "\(badPin.status) \(badPin.stderr)")
        #expect(badPin.stderr.contains("--pin"))
        let noCA = try await CourierProcess.run(["fetch", "--cacert", "/nonexistent/ca.pem", "https://127.0.0.1:1/"])
        #expect(noCA.status == 64 || noCA.status == 2, "\(noCA.status) \(noCA.stderr)")
        #expect(noCA.stderr.contains("/nonexistent/ca.pem"))
    }

    @Test func insecureAcceptsASelfSignedServerWithALoudWarning() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(chain: "selfsigned"))
        defer { peer.stop() }
        let result = try await CourierProcess.run(["fetch", "-k", peer.url("/bytes/4")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("WARNING: --insecure"))
    }

    @Test func verboseShowsTheSessionAndTheCertificate() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let result = try await CourierProcess.run(["fetch", "-v", "--cacert", Self.pki.rootCA, peer.url("/bytes/4")])
        #expect(result.status == 0, "\(result.stderr)")
        // As curl's -v: the address connected to, the session, the certificate, then the heads.
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("* Connected to 127.0.0.1 (127.0.0.1) port \(peer.port)"), "\(result.stderr)")
        #expect(lines.contains { $0.hasPrefix("* TLS connection using TLSv1.3 / TLS_") }, "\(result.stderr)")
        #expect(lines.contains("* ALPN: server accepted http/1.1"))
        #expect(lines.contains { $0.hasPrefix("*  subject: /CN=localhost") })
        #expect(lines.contains { $0.hasPrefix("*  issuer: /CN=Courier Test Intermediate") })
        #expect(lines.contains { $0.hasPrefix("*  expire date: 20") })
        #expect(lines.contains("> GET /bytes/4 HTTP/1.1"))
        #expect(lines.contains { $0.hasPrefix("< HTTP/1.") && $0.contains(" 200 ") })
    }

    @Test func aPolicyMinimumOf13AgainstA12OnlyServerExits35() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(maxVersion: "1.2"))
        defer { peer.stop() }
        let policy = try PolicyFile("""
            version: 1
            services:
              strict:
                hosts: [127.0.0.1]
                tls: { min-version: "1.3", ca-file: "\(Self.pki.rootCA)" }
                retry: { max-attempts: 1 }
            """)
        let result = try await CourierProcess.run(["fetch", "--policy", policy.path, peer.url("/")])
        #expect(result.status == 35, "\(result.stderr)")
        #expect(result.stderr.contains("tls-handshake"))
    }

    @Test func aServicesOwnCAFileWinsForItsHostsAndCacertServesTheRest() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        // The service claims 127.0.0.1 and trusts only the untrusted root; localhost is nobody's and gets --cacert.
        let policy = try PolicyFile("""
            version: 1
            services:
              other-ca:
                hosts: [127.0.0.1]
                tls: { ca-file: "\(Self.pki.untrustedRootCA)" }
                retry: { max-attempts: 1 }
            """)
        let claimed = try await CourierProcess.run(["fetch", "--policy", policy.path, "--cacert", Self.pki.rootCA, peer.url("/bytes/1")])
        #expect(claimed.status == 60, "\(claimed.stderr)")
        let unclaimed = try await CourierProcess.run([
            "fetch", "--policy", policy.path, "--cacert", Self.pki.rootCA, peer.localhostURL("/bytes/1"),
        ])
        #expect(unclaimed.status == 0, "\(unclaimed.stderr)")
    }

    @Test func pinsApplyOnlyToTheHostsOfThePinnedService() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { peer.stop() }
        let policy = try PolicyFile("""
            version: 1
            services:
              pinned:
                hosts: [localhost]
                tls: { pins: ["\(Self.pki.pins["backup"]!)", "\(Self.pki.pins["untrusted"]!)"], ca-file: "\(Self.pki.rootCA)" }
                retry: { max-attempts: 1 }
              open:
                hosts: [127.0.0.1]
                tls: { ca-file: "\(Self.pki.rootCA)" }
            """)
        let pinned = try await CourierProcess.run(["fetch", "--policy", policy.path, peer.localhostURL("/bytes/1")])
        #expect(pinned.status == 90, "\(pinned.stderr)")
        let open = try await CourierProcess.run(["fetch", "--policy", policy.path, peer.url("/bytes/1")])
        #expect(open.status == 0, "\(open.stderr)")
    }
}

/// A policy file in a temporary folder, removed with the value.
final class PolicyFile {
    let path: String

    init(_ text: String) throws {
        path = NSTemporaryDirectory() + "courier-tls-policy-\(UUID().uuidString).yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
