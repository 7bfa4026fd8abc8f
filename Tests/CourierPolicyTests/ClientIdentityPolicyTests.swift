import CourierCore
import CourierPolicy
import Foundation
import Testing

/// `tls.client-certificate`, `client-key` and `client-key-password` (in defaults and services) and a service's
/// `connect-to: unix:/path`: what the compiled graph holds, and what lint says about a key others can read.
@Suite struct ClientIdentityPolicyTests {
    /// A folder with a certificate and a key of the given mode, and a policy beside them.
    static func compileWithKey(mode: mode_t, policy: (String) -> String) throws -> (PolicyCompilation, String) {
        let folder = try makeTemporaryDirectory()
        try writeFile(folder + "/client.pem", "-----BEGIN CERTIFICATE-----\n")
        try writeFile(folder + "/client.key", "-----BEGIN PRIVATE KEY-----\n")
        #expect(chmod(folder + "/client.key", mode) == 0)
        let result = PolicyCompiler().compile(source: policy(folder), path: folder + "/policy.yaml")
        return (result, folder)
    }

    @Test func aServiceIdentityIsCompiledWithPathsRelativeToThePolicyAndThePasswordAsAReference() throws {
        let (result, folder) = try Self.compileWithKey(mode: 0o600) { _ in
            """
            version: 1
            services:
              partner:
                hosts: [partner.example.com]
                tls:
                  client-certificate: client.pem
                  client-key: client.key
                  client-key-password: "${env:PARTNER_KEY_PASSWORD}"
            """
        }
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let identity = try #require(result.graph?.services.first?.tls.clientIdentity)
        #expect(identity.certificateFile == folder + "/client.pem")
        #expect(identity.keyFile == folder + "/client.key")
        #expect(identity.keyPassword?.description == "${env:PARTNER_KEY_PASSWORD}")
        #expect(identity.description == "certificate \(folder)/client.pem, key \(folder)/client.key, password ${env:PARTNER_KEY_PASSWORD}")
    }

    @Test func defaultsTLSIsWhatEveryServiceStartsFrom() throws {
        let (result, folder) = try Self.compileWithKey(mode: 0o600) { _ in
            """
            version: 1
            defaults:
              tls: { client-certificate: client.pem, client-key: client.key }
            services:
              a: { hosts: [a.example.com] }
              b: { hosts: [b.example.com], tls: { min-version: "1.3" } }
            """
        }
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let graph = try #require(result.graph)
        for service in graph.services {
            #expect(service.tls.clientIdentity?.certificateFile == folder + "/client.pem", "\(service.name)")
        }
        #expect(graph.services.first { $0.name == "b" }?.tls.minVersion == .tls13)
        // A host no service claims presents no certificate.
        #expect(graph.route(for: HTTPURL("https://elsewhere.example.net/")!, method: .get).tls.clientIdentity == nil)
    }

    @Test(arguments: [0o644 as mode_t, 0o640, 0o604])
    func aKeyOthersCanReadIsAWarning(_ mode: mode_t) throws {
        let (result, folder) = try Self.compileWithKey(mode: mode) { _ in
            """
            version: 1
            services:
              partner:
                hosts: [partner.example.com]
                tls: { client-certificate: client.pem, client-key: client.key }
            """
        }
        #expect(result.summary == ["client-key-readable@5"])
        let diagnostic = try #require(result.diagnostics.first)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.message == "tls.client-key 'client.key' can be read by other users (mode \(String(mode, radix: 8)))")
        #expect(diagnostic.suggestion == "chmod 600 \(folder)/client.key")
        #expect(result.graph != nil)
    }

    @Test func aLiteralPasswordIsTheUsualLiteralSecretWarningAndNeverPrinted() throws {
        let (result, _) = try Self.compileWithKey(mode: 0o600) { _ in
            """
            version: 1
            services:
              partner:
                hosts: [partner.example.com]
                tls: { client-certificate: client.pem, client-key: client.key, client-key-password: hunter2 }
            """
        }
        #expect(result.summary == ["secret-literal@5"])
        let tls = try #require(result.graph?.services.first?.tls)
        #expect(!"\(tls)".contains("hunter2"))
        #expect(!String(reflecting: tls).contains("hunter2"))
        #expect(tls.clientIdentity?.description.contains("password <redacted>") == true)
    }

    /// The Redis connection's TLS takes a client identity as a service's does, and the same mistake is the same
    /// error there.
    @Test func coordinationRedisTLSTakesAClientCertificateAndAKeyAloneIsAnError() throws {
        let (good, folder) = try Self.compileWithKey(mode: 0o600) { _ in
            """
            version: 1
            coordination:
              redis:
                url: "rediss://127.0.0.1:6380/0"
                tls: { client-certificate: client.pem, client-key: client.key }
            """
        }
        #expect(good.diagnostics.isEmpty, "\(good.diagnostics)")
        #expect(good.graph?.coordination?.redis.tls?.clientIdentity?.certificateFile == folder + "/client.pem")
        let (orphan, _) = try Self.compileWithKey(mode: 0o600) { _ in
            """
            version: 1
            coordination:
              redis:
                url: "rediss://127.0.0.1:6380/0"
                tls: { client-key: client.key }
            """
        }
        #expect(orphan.summary == ["client-key-without-certificate@5"])
        #expect(orphan.graph == nil)
    }

    @Test func connectToUnixIsTheServicesSocketRelativeToThePolicy() throws {
        let result = compile("""
            version: 1
            services:
              docker:
                hosts: [docker]
                scheme: http
                connect-to: unix:/run/docker.sock
              sidecar:
                hosts: [sidecar]
                scheme: http
                connect-to: unix:sockets/sidecar.sock
            """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let graph = try #require(result.graph)
        #expect(graph.route(for: HTTPURL("http://docker/v1.43/info")!, method: .get).unixSocket == "/run/docker.sock")
        #expect(graph.route(for: HTTPURL("http://sidecar/")!, method: .get).unixSocket == Fixtures.path("sockets/sidecar.sock"))
        #expect(graph.route(for: HTTPURL("http://other/")!, method: .get).unixSocket == nil)
    }
}
