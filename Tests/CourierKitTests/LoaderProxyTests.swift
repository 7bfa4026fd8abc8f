import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing

/// The data loader through squid: the policy's `proxy:` with a secret password, an authoriser's credentials kept
/// inside the tunnel, fallbacks named by the tunnel, and the environment's proxies, which a library user can turn
/// off.
@Suite(.timeLimit(.minutes(2))) struct LoaderProxyTests {
    static let pki = TestPKI.shared

    @Test func thePolicysProxyCarriesTheLoadsAndTheAuthorisersCredentialsStayInsideTheTunnel() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let graph = try compile("""
            version: 1
            defaults:
              proxy: { url: "\(squid.url())", username: alice, password: "${env:PROXY_PASSWORD}" }
            authorisers:
              bearer: { plugin: static-bearer, settings: { token: "${env:API_TOKEN}" } }
            services:
              api: { hosts: [localhost], authoriser: bearer, tls: { ca-file: "\(Self.pki.rootCA)" } }
            """)
        let service = DataLoaderService(graph: graph, configuration: .testing { $0.environment = ["PROXY_PASSWORD": "s3cret", "API_TOKEN": "t0ken"] })
        let loader = service.makeFactory().makeLoader()
        let response = try await loader.load(Request(url: origin.localhostURL("/echo")))
        #expect(response.status == 200)
        let saw = String(decoding: response.body, as: UTF8.self).lowercased()
        #expect(saw.contains("bearer t0ken"))
        #expect(!saw.contains("proxy-authorization"))
        await service.shutdown(gracePeriod: .zero)
        #expect(await squid.accessLog() == ["CONNECT localhost:\(origin.port) 200 alice [Basic YWxpY2U6czNjcmV0] [-]"])
    }

    @Test func aFallbackIsTheOriginTheNextTunnelNames() async throws {
        let squid = try await SquidProxy.start()
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let closed = try ClosedPort()
        let graph = try compile("""
            version: 1
            defaults:
              proxy: { url: "\(squid.url())" }
            services:
              api:
                hosts: [localhost]
                tls: { ca-file: "\(Self.pki.rootCA)" }
                fallbacks: { localhost: ["127.0.0.1:\(origin.port)"] }
            """)
        let service = DataLoaderService(graph: graph, configuration: .testing())
        let response = try await service.makeFactory().makeLoader().load(Request(url: "https://localhost:\(closed.port)/bytes/5"))
        #expect(response.status == 200)
        #expect(response.body.count == 5)
        await service.shutdown(gracePeriod: .zero)
        let log = await squid.accessLog(atLeast: 2)
        #expect(log.contains { $0.hasPrefix("CONNECT localhost:\(closed.port) 50") })
        #expect(log.contains("CONNECT 127.0.0.1:\(origin.port) 200 - [-] [-]"))
    }

    /// A request's own proxy wins over the environment's (and the policy's): the load goes through squid although
    /// `https_proxy` names a port where nothing listens.
    @Test func aRequestsOwnProxyWinsOverTheEnvironment() async throws {
        let squid = try await SquidProxy.start()
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        let closed = try ClosedPort()
        let graph = try compile("version: 1\nservices:\n  api: { hosts: [localhost], tls: { ca-file: \"\(Self.pki.rootCA)\" } }\n")
        let service = DataLoaderService(graph: graph, configuration: .testing { $0.environment = ["https_proxy": "http://127.0.0.1:\(closed.port)"] })
        var request = Request(url: origin.localhostURL("/bytes/3"))
        request.proxy = try ProxyServer.parse(squid.url())
        let response = try await service.makeFactory().makeLoader().load(request)
        #expect(response.status == 200)
        #expect(response.body.count == 3)
        await service.shutdown(gracePeriod: .zero)
        #expect(await squid.accessLog().first?.hasPrefix("CONNECT localhost:\(origin.port) 200") == true)
    }

    @Test func theEnvironmentsProxyAppliesUnlessTheLibraryUserTurnsItOff() async throws {
        let origin = try await PythonPeer.start()
        let closed = try ClosedPort()
        let graph = try compile("version: 1\nservices:\n  api: { hosts: [127.0.0.1], scheme: http }\n")
        let environment = ["http_proxy": "http://127.0.0.1:\(closed.port)"]
        let proxied = DataLoaderService(graph: graph, configuration: .testing { $0.environment = environment })
        await #expect {
            _ = try await proxied.makeFactory().makeLoader().load(Request(url: origin.url("/bytes/1")))
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.kind == .connect && error.message.contains("proxy http://127.0.0.1:\(closed.port)")
        }
        let direct = DataLoaderService(graph: graph, configuration: .testing {
            $0.environment = environment
            $0.usesEnvironmentProxies = false
        })
        let response = try await direct.makeFactory().makeLoader().load(Request(url: origin.url("/bytes/1")))
        #expect(response.status == 200)
        await proxied.shutdown(gracePeriod: .zero)
        await direct.shutdown(gracePeriod: .zero)
    }
}
