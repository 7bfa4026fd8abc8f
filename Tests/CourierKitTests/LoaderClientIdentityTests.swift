import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing

/// The data loader with a policy's client certificate (its key's password a `${env:…}` secret, resolved from the
/// loader's environment) against Python's TLS server that requires one, and with a service's
/// `connect-to: unix:/path` against Python's `http.server` on a socket: the route's retries apply there too.
@Suite(.timeLimit(.minutes(2))) struct LoaderClientIdentityTests {
    static let pki = TestPKI.shared

    static func policy(password: String) -> String {
        """
        version: 1
        services:
          partner:
            hosts: [localhost]
            tls:
              ca-file: "\(pki.rootCA)"
              client-certificate: "\(pki.chain("client"))"
              client-key: "\(pki.encryptedClientKey)"
              client-key-password: "\(password)"
        """
    }

    @Test func theKeyPasswordIsResolvedFromTheLoadersEnvironment() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(clientCA: Self.pki.clientRootCA))
        let service = DataLoaderService(
            graph: try compile(Self.policy(password: "${env:PARTNER_KEY_PASSWORD}")),
            configuration: .testing { $0.environment = ["PARTNER_KEY_PASSWORD": Self.pki.clientKeyPassword] }
        )
        let loader = service.makeFactory().makeLoader()
        let response = try await loader.load(Request(url: peer.localhostURL("/client-cert")))
        #expect(String(decoding: response.body, as: UTF8.self) == "Courier Test Client")
    }

    /// A request's own client certificate, for a service whose policy names none: presented to the server that
    /// requires one; the same request without it is refused.
    @Test func aRequestsOwnIdentityIsPresented() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(clientCA: Self.pki.clientRootCA))
        let graph = try compile("version: 1\nservices:\n  partner: { hosts: [localhost], tls: { ca-file: \"\(Self.pki.rootCA)\" } }\n")
        let service = DataLoaderService(graph: graph, configuration: .testing())
        let loader = service.makeFactory().makeLoader()
        var request = Request(url: peer.localhostURL("/client-cert"))
        request.clientIdentity = ClientIdentity(certificateFile: Self.pki.chain("client"), keyFile: Self.pki.key("client"))
        let response = try await loader.load(request)
        #expect(String(decoding: response.body, as: UTF8.self) == "Courier Test Client")
        await #expect(throws: CourierError.self) {
            _ = try await loader.load(Request(url: peer.localhostURL("/client-cert"), maxAttempts: 1))
        }
        await service.shutdown(gracePeriod: .zero)
    }

    @Test func aPasswordThatCannotBeResolvedFailsTheLoadWithoutConnecting() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions(clientCA: Self.pki.clientRootCA))
        let service = DataLoaderService(graph: try compile(Self.policy(password: "${env:UNSET_PASSWORD}")), configuration: .testing())
        let loader = service.makeFactory().makeLoader()
        do {
            _ = try await loader.load(Request(url: peer.localhostURL("/bytes/1")))
            Issue.record("a load without the key's password succeeded")
        } catch {
            #expect(error.kind == .tlsClientCertificate)
            #expect(error.message.hasPrefix("the client key's password could not be resolved"))
        }
        let count = try await PythonPeerProbe.connections(peer)
        #expect(count == 0)
    }

    @Test func aServicesUnixSocketCarriesItsRequestsWithItsRetries() async throws {
        let folder = "/tmp/courier-loader-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let peer = try await PythonPeer.start(unixSocket: folder + "/api.sock")
        defer { peer.stop() }
        let loader = try makeService("""
            version: 1
            services:
              daemon:
                hosts: [daemon]
                scheme: http
                connect-to: unix:\(folder)/api.sock
                retry: { max-attempts: 3, on: [503], backoff: { initial: 10ms, jitter: none } }
            """).makeFactory().makeLoader()
        let echo = try await loader.load(Request(url: "http://daemon/echo"))
        #expect(echo.status == 200)
        #expect(String(decoding: echo.body, as: UTF8.self).contains(#"["Host", "daemon"]"#))
        let flaky = try await loader.load(Request(url: "http://daemon/status/503"))
        #expect(flaky.attempts == 3)
        let count = try await loader.load(Request(url: "http://daemon/connections"))
        #expect(String(decoding: count.body, as: UTF8.self) == #"{"accepted": 1}"#)
    }
}

/// Asks a TLS peer (which wants no client certificate for this) how many connections it accepted, over a
/// separate plain client: `/connections` needs a handshake, so it goes with the right certificate.
enum PythonPeerProbe {
    static func connections(_ peer: PythonPeer) async throws -> Int {
        let pki = TestPKI.shared
        let service = DataLoaderService(
            graph: try compile("""
                version: 1
                services:
                  probe:
                    hosts: [localhost]
                    tls: { ca-file: "\(pki.rootCA)", client-certificate: "\(pki.chain("client"))", client-key: "\(pki.key("client"))" }
                """),
            configuration: .testing()
        )
        let response = try await service.makeFactory().makeLoader().load(Request(url: peer.localhostURL("/connections")))
        let text = String(decoding: response.body, as: UTF8.self)
        // The probe's own connection is the last one counted.
        return (Int(text.filter(\.isNumber)) ?? 0) - 1
    }
}
