import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch` through real proxies (squid, microsocks) with -x, -U, --noproxy, the environment and a policy's
/// `proxy:`, curl's exit codes for each hop's failure, and `courier explain` saying which proxy a URL uses.
@Suite(.timeLimit(.minutes(2)), .onBlockingThreads) struct FetchProxyTests {
    /// A policy file in a scratch directory of its own.
    func policy(_ yaml: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appending(path: "courier-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appending(path: "app.yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func dashXAndDashUGoThroughSquidWhichAloneSeesTheCredentials() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start()
        defer { origin.stop() }
        let result = try await CourierProcess.run(["fetch", "-x", squid.url(), "-U", "alice:s3cret", origin.url("/echo")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.lowercased().contains("proxy-authorization"))
        #expect(await squid.accessLog().first?.hasPrefix("GET \(origin.url("/echo")) 200 alice") == true)
    }

    @Test func eachHopsFailureHasCurlsExitCodeAndNamesTheProxy() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let socks = try await MicroSocksProxy.start(username: "bob", password: "pw")
        let origin = try await PythonPeer.start(tls: TLSPeerOptions())
        defer { origin.stop() }
        let closed = try ClosedPort()
        let url = origin.url("/bytes/1")
        let cacert = ["--cacert", TestPKI.shared.rootCA]
        let unresolved = try await CourierProcess.run(["fetch", "-x", "http://proxy.invalid:3128", url] + cacert)
        #expect(unresolved.status == 5, "\(unresolved.stderr)")
        #expect(unresolved.stderr.contains("proxy.invalid"))
        let refused = try await CourierProcess.run(["fetch", "-x", "127.0.0.1:\(closed.port)", url] + cacert)
        #expect(refused.status == 7, "\(refused.stderr)")
        #expect(refused.stderr.contains("http://127.0.0.1:\(closed.port)"))
        let unauthenticated = try await CourierProcess.run(["fetch", "-x", squid.url(), url] + cacert)
        #expect(unauthenticated.status == 56, "\(unauthenticated.stderr)")
        #expect(unauthenticated.stderr.contains("407"))
        let socksRefused = try await CourierProcess.run(["fetch", "-x", socks.url(), "-U", "bob:nope", url] + cacert)
        #expect(socksRefused.status == 97, "\(socksRefused.stderr)")
        #expect(!socksRefused.stderr.contains("nope"))
        let throughSocks = try await CourierProcess.run(["fetch", "-x", socks.url(remoteResolution: true), "-U", "bob:pw", origin.localhostURL("/bytes/3")] + cacert)
        #expect(throughSocks.status == 0, "\(throughSocks.stderr)")
        let badScheme = try await CourierProcess.run(["fetch", "-x", "ftp://proxy", url])
        #expect(badScheme.status == 2)
        #expect(badScheme.stderr.contains("'ftp' is not supported"))
    }

    @Test func theEnvironmentIsReadAsCurlReadsItAndNoProxyOrDashXEmptyGoDirect() async throws {
        let squid = try await SquidProxy.start()
        let origin = try await PythonPeer.start()
        defer { origin.stop() }
        let closed = try ClosedPort()
        let viaEnvironment = try await CourierProcess.run(["fetch", origin.url("/bytes/1")], environment: ["http_proxy": squid.url()])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")
        #expect(await squid.accessLog().count == 1)
        // HTTP_PROXY (upper case) is never read for http: under CGI it is the request's Proxy header.
        let upper = try await CourierProcess.run(["fetch", origin.url("/bytes/1")], environment: ["HTTP_PROXY": "http://127.0.0.1:\(closed.port)"])
        #expect(upper.status == 0, "\(upper.stderr)")
        let exempt = try await CourierProcess.run(
            ["fetch", origin.url("/bytes/1")], environment: ["http_proxy": "http://127.0.0.1:\(closed.port)", "no_proxy": "localhost,127.0.0.0/8"]
        )
        #expect(exempt.status == 0, "\(exempt.stderr)")
        let explicitNoProxy = try await CourierProcess.run(
            ["fetch", "--noproxy", "127.0.0.1", origin.url("/bytes/1")], environment: ["http_proxy": "http://127.0.0.1:\(closed.port)"]
        )
        #expect(explicitNoProxy.status == 0, "\(explicitNoProxy.stderr)")
        let off = try await CourierProcess.run(["fetch", "-x", "", origin.url("/bytes/1")], environment: ["http_proxy": "http://127.0.0.1:\(closed.port)"])
        #expect(off.status == 0, "\(off.stderr)")
        // Never a fallback to direct: the environment's proxy refuses, the fetch fails.
        let never = try await CourierProcess.run(["fetch", origin.url("/bytes/1")], environment: ["http_proxy": "http://127.0.0.1:\(closed.port)"])
        #expect(never.status == 7)
        #expect(await squid.accessLog().count == 1)
    }

    @Test func aPolicysProxyCarriesItsServicesAndProxyOffGoesDirect() async throws {
        let squid = try await SquidProxy.start(username: "alice", password: "s3cret")
        let origin = try await PythonPeer.start()
        defer { origin.stop() }
        let closed = try ClosedPort()
        let path = try policy("""
            version: 1
            defaults:
              proxy:
                url: "\(squid.url())"
                username: alice
                password: "${env:PROXY_TEST_PASSWORD}"
            services:
              proxied: { hosts: [127.0.0.1], scheme: http }
              direct: { hosts: [localhost], scheme: http, proxy: off }
            """)
        let environment = ["PROXY_TEST_PASSWORD": "s3cret", "http_proxy": "http://127.0.0.1:\(closed.port)"]
        let proxied = try await CourierProcess.run(["fetch", "--policy", path, origin.url("/echo")], environment: environment)
        #expect(proxied.status == 0, "\(proxied.stderr)")
        #expect(!proxied.stdout.lowercased().contains("proxy-authorization"))
        #expect(await squid.accessLog().first?.hasPrefix("GET \(origin.url("/echo")) 200 alice [Basic YWxpY2U6czNjcmV0]") == true)
        let direct = try await CourierProcess.run(["fetch", "--policy", path, origin.localhostURL("/bytes/1")], environment: environment)
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(await squid.accessLog().count == 1)

        let explained = try await CourierProcess.run(["explain", path, origin.url("/v1")], environment: environment)
        #expect(explained.status == 0, "\(explained.stderr)")
        #expect(explained.stdout.contains("proxy:        \(squid.url().replacingOccurrences(of: "http://", with: "http://alice@")) (the policy names a proxy)"))
        #expect(!explained.stdout.contains("s3cret"))
        let explainedOff = try await CourierProcess.run(["explain", path, origin.localhostURL("/v1")], environment: environment)
        #expect(explainedOff.stdout.contains("proxy:        none, direct (the policy says proxy: off)"))
    }

    @Test func explainSaysWhichEnvironmentVariableAndWhichNoProxyEntryDecided() async throws {
        let env = ["https_proxy": "http://proxy.corp.example:3128", "no_proxy": ".internal.example"]
        let proxied = try await CourierProcess.run(["explain", "clean/app.yaml", "https://api.example.com/v1/x"], environment: env)
        #expect(proxied.stdout.contains("proxy:        http://proxy.corp.example:3128 (https_proxy is set)"), "\(proxied.stdout)")
        let exempt = try await CourierProcess.run(["explain", "clean/app.yaml", "https://wiki.internal.example/"], environment: env)
        #expect(exempt.stdout.contains("proxy:        none, direct (wiki.internal.example matches no_proxy ('.internal.example'))"), "\(exempt.stdout)")
        let json = try await CourierProcess.run(["explain", "clean/app.yaml", "https://api.example.com/v1/x", "--format", "json"], environment: env)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let proxy = try #require(object["proxy"] as? [String: Any])
        #expect(proxy["source"] as? String == "environment")
        #expect(proxy["variable"] as? String == "https_proxy")
    }
}
