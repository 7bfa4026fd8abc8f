import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch --cert/--key/--pass` (curl's) against `openssl s_server -Verify`, and `--unix-socket` and
/// `http+unix://` URLs against Python's `http.server` on a socket path, with curl's exit codes.
@Suite(.timeLimit(.minutes(2)), .onBlockingThreads) struct FetchClientCertificateTests {
    static let pki = TestPKI.shared

    @Test func aClientCertificateIsPresentedAndAccepted() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let result = try await CourierProcess.run([
            "fetch", "--cacert", Self.pki.rootCA, "--cert", Self.pki.chain("client"), "--key", Self.pki.key("client"), server.url,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("s_server"))
    }

    @Test func curlsFileColonPasswordFormDecryptsTheKey() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        // The certificate and the encrypted key in one file, as curl's --cert takes them.
        let combined = NSTemporaryDirectory() + "courier-identity-\(UUID().uuidString.prefix(8)).pem"
        defer { try? FileManager.default.removeItem(atPath: combined) }
        let pem = try String(contentsOfFile: Self.pki.chain("client"), encoding: .utf8)
            + String(contentsOfFile: Self.pki.encryptedClientKey, encoding: .utf8)
        try pem.write(toFile: combined, atomically: true, encoding: .utf8)
        let result = try await CourierProcess.run([
            "fetch", "--cacert", Self.pki.rootCA, "--cert", "\(combined):\(Self.pki.clientKeyPassword)", server.url,
        ])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func withoutACertificateTheRefusalNamesTheAlertAndExits35() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let result = try await CourierProcess.run(["fetch", "--cacert", Self.pki.rootCA, server.url])
        #expect(result.status == 35, "\(result.stderr)")
        #expect(result.stderr.contains("the server requires a client certificate and none was given (TLS alert certificate_required)"))
    }

    @Test func aWrongPasswordExits58NamingTheKeyAndNeverPrintsThePassword() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let result = try await CourierProcess.run([
            "fetch", "--cacert", Self.pki.rootCA, "--cert", Self.pki.chain("client"), "--key", Self.pki.encryptedClientKey,
            "--pass", "hunter2-wrong", "-v", "--json-report", "-", server.url,
        ])
        #expect(result.status == 58, "\(result.stderr)")
        #expect(result.stderr.contains("the password does not decrypt the client key '\(Self.pki.encryptedClientKey)'"))
        #expect(result.stderr.contains("tls-client-certificate"))
        #expect(!result.stderr.contains("hunter2"))
        #expect(!result.stdout.contains("hunter2"))
    }

    @Test func aKeyThatIsNotTheCertificatesExits58() async throws {
        let server = try await OpenSSLServer.start(clientCA: Self.pki.clientRootCA)
        let result = try await CourierProcess.run([
            "fetch", "--cacert", Self.pki.rootCA, "--cert", Self.pki.chain("client"), "--key", Self.pki.key("client2"), server.url,
        ])
        #expect(result.status == 58, "\(result.stderr)")
        #expect(result.stderr.contains("does not belong to the client certificate"))
    }

    @Test func keyWithoutCertIsAUsageError() async throws {
        let result = try await CourierProcess.run(["fetch", "--key", Self.pki.key("client"), "https://localhost/"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--key and --pass go with --cert FILE"))
    }

    // MARK: - Unix sockets

    @Test func unixSocketSendsTheURLsHostAndHTTPUnixURLsSayLocalhost() async throws {
        let folder = "/tmp/courier-cli-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socket = folder + "/api.sock"
        let peer = try await PythonPeer.start(unixSocket: socket)
        defer { peer.stop() }
        let viaOption = try await CourierProcess.run(["fetch", "--unix-socket", socket, "http://docker/echo"])
        #expect(viaOption.status == 0, "\(viaOption.stderr)")
        #expect(viaOption.stdout.contains(#"["Host", "docker"]"#))
        let encoded = socket.replacingOccurrences(of: "/", with: "%2F")
        let viaURL = try await CourierProcess.run(["fetch", "--json-report", "-", "http+unix://\(encoded)/echo"])
        #expect(viaURL.status == 0, "\(viaURL.stderr)")
        #expect(viaURL.stdout.contains(#"["Host", "localhost"]"#))
        // The report names the URL as it was given.
        #expect(viaURL.stderr.contains(#""url":"http+unix://\#(encoded)/echo""#), "\(viaURL.stderr)")
    }

    @Test func aMissingSocketExits7NamingThePath() async throws {
        let result = try await CourierProcess.run(["fetch", "--unix-socket", "/tmp/courier-no-such-dir/x.sock", "http://localhost/"])
        #expect(result.status == 7, "\(result.stderr)")
        #expect(result.stderr.contains("could not connect to the Unix socket /tmp/courier-no-such-dir/x.sock: No such file or directory"))
    }

    @Test func unixSocketsAndAPolicyAreAUsageError() async throws {
        let result = try await CourierProcess.run([
            "fetch", "--unix-socket", "/tmp/x.sock", "--cache-dir", "/tmp/courier-never-made", "http://localhost/",
        ])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("connect-to: unix:/path"))
    }
}
