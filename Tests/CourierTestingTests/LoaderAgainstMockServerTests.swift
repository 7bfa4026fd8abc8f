import CourierAuthorisers
import CourierCore
import CourierKit
import CourierPolicy
import CourierTesting
import Testing

/// The data loader, policy and all, against MockServer: Retry-After, an authoriser's token, and HTTPS with the CA
/// the server made named in the policy.
@Suite(.timeLimit(.minutes(1))) struct LoaderAgainstMockServerTests {
    func loader(_ yaml: String) throws -> (DataLoaderService, DataLoader) {
        let compilation = PolicyCompiler(registry: .standard).compile(source: yaml, path: "/tmp/mock-tests.yaml")
        if compilation.hasErrors { Issue.record("policy errors: \(compilation.diagnostics)") }
        var configuration = DataLoaderService.Configuration(userAgent: "courier-testing-tests/1")
        configuration.environment = [:]
        let service = DataLoaderService(graph: try #require(compilation.graph), configuration: configuration)
        return (service, service.makeFactory().makeLoader())
    }

    @Test func theLoaderWaitsOutRetryAfterAndTriesAgain() async throws {
        try await withMockServer { server in
            try server.enqueue(.tooManyRequests(retryAfter: 1))
            try server.enqueue(.json(#"{"ok":true}"#))
            let (service, loader) = try loader("""
                version: 1
                services:
                  api:
                    hosts: [127.0.0.1]
                    retry: { max-attempts: 3, on: [429], backoff: { initial: 10ms, jitter: none }, respect-retry-after: true }
                """)
            let response = try await loader.load(Request(url: server.baseURL + "/items"))
            await service.shutdown()
            #expect(response.status == 200)
            #expect(response.attempts == 2)
            let times = server.requests.map(\.receivedAt)
            #expect(times.count == 2)
            #expect(times[1] - times[0] >= .milliseconds(900), "Retry-After: 1 honoured: \(times[1] - times[0]) apart")
        }
    }

    @Test func anAuthoriserTokenOpensARouteThatWantsIt() async throws {
        try await withMockServer { server in
            server.on(.get, "/me", requiringBearerToken: "mock-token-7") { _ in .json(#"{"me":1}"#) }
            let (service, loader) = try loader("""
                version: 1
                authorisers:
                  bearer: { plugin: static-bearer, allow-plain-http: true, settings: { token: "mock-token-7" } }
                services:
                  api: { hosts: [127.0.0.1], authoriser: bearer }
                """)
            let (plainService, plain) = try self.loader("version: 1\n")
            let authorised = try await loader.load(Request(url: server.baseURL + "/me"))
            let refused = try await plain.load(Request(url: server.baseURL + "/me"))
            await service.shutdown()
            await plainService.shutdown()
            #expect(authorised.status == 200)
            #expect(refused.status == 401)
            #expect(refused.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            #expect(!String(decoding: refused.body, as: UTF8.self).contains("mock-token-7"))
            #expect(server.requests.map { $0.headers["authorization"] } == ["Bearer mock-token-7", nil])
        }
    }

    @Test func aPolicyTrustingTheMadeCALoadsOverHTTPS() async throws {
        try await withMockServer(tls: true) { server in
            server.on(.get, "/secure") { _ in .text("over tls") }
            let path = try #require(server.certificateAuthorityPath)
            let (service, loader) = try loader("""
                version: 1
                services:
                  api: { hosts: [127.0.0.1], tls: { ca-file: "\(path)" } }
                """)
            let (untrustingService, untrusting) = try self.loader("version: 1\n")
            let response = try await loader.load(Request(url: server.baseURL + "/secure"))
            await #expect(throws: CourierError.self) { _ = try await untrusting.load(Request(url: server.baseURL + "/secure")) }
            await service.shutdown()
            await untrustingService.shutdown()
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "over tls")
            #expect(response.timeline.tlsSession != nil)
        }
    }
}
