import CourierAuthorisers
import CourierCore
import CourierTestSupport
import CourierTransport
import Foundation
import Testing

/// The header- and query-based plugins, checked byte for byte on the wire of a loopback server.
@Suite(.timeLimit(.minutes(1))) struct StaticPluginTests {
    /// Authorises a GET of `path` with `plugin`, sends it, and returns what the server received.
    private func send(
        _ plugin: String, _ settings: [String: PolicyValue], path: String = "/v1/items",
        environment: [String: String] = [:]
    ) async throws -> ReceivedRequest {
        let server = try RecordingServer { _, _ in .json(200, "{}") }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let context = makeContext(client: client, environment: environment)
        let authoriser = try AuthoriserRegistry.standard.makeAuthoriser(for: makeInstance(plugin, settings), context: context)
        var request = AuthorisationRequest(url: HTTPURL(server.url(path))!)
        try await authoriser.authorise(&request)
        let response = try await client.execute(HTTPRequest(method: request.method, url: request.url, headers: request.headers))
        #expect(response.status == 200)
        return try #require(server.requests.first)
    }

    @Test func staticBearerDefaults() async throws {
        let received = try await send("static-bearer", ["token": env("API_TOKEN")], environment: ["API_TOKEN": "abc.DEF-123"])
        #expect(received.headerLines.contains("Authorization: Bearer abc.DEF-123"))
    }

    @Test func staticBearerCustomHeaderAndPrefix() async throws {
        let received = try await send(
            "static-bearer", ["token": env("T"), "header": str("X-Auth"), "prefix": str("Token ")], environment: ["T": "zz"]
        )
        #expect(received.headerLines.contains("X-Auth: Token zz"))
        #expect(received.header("authorization") == nil)
    }

    @Test func apiKeyInHeader() async throws {
        let received = try await send("api-key", ["key": env("K")], environment: ["K": "k-123"])
        #expect(received.headerLines.contains("X-API-Key: k-123"))
        let custom = try await send("api-key", ["key": env("K"), "header": str("Api-Token")], environment: ["K": "k-123"])
        #expect(custom.headerLines.contains("Api-Token: k-123"))
    }

    @Test func apiKeyInQueryItemIsPercentEncodedAndAppended() async throws {
        let received = try await send(
            "api-key", ["key": env("K"), "query-item": str("api key")], path: "/v1/items?page=2", environment: ["K": "a b&c=d/é"]
        )
        #expect(received.requestLine == "GET /v1/items?page=2&api%20key=a%20b%26c%3Dd%2F%C3%A9 HTTP/1.1")
        #expect(received.header("x-api-key") == nil)
        let bare = try await send("api-key", ["key": env("K"), "query-item": str("key")], environment: ["K": "v"])
        #expect(bare.requestLine == "GET /v1/items?key=v HTTP/1.1")
    }

    @Test func apiKeyHeaderAndQueryItemAreExclusive() throws {
        let context = AuthoriserContext(secrets: .system(environment: ["K": "v"]), httpClient: Unreachable(), clock: { 0 })
        #expect {
            _ = try APIKeyPlugin.make(makeInstance("api-key", ["key": env("K"), "header": str("X-K"), "query-item": str("k")]), context: context)
        } throws: { ($0 as? AuthoriserError)?.kind == .invalidSetting }
    }

    /// RFC 7617 §2's example.
    @Test func basicCredentials() async throws {
        let received = try await send(
            "basic", ["username": str("Aladdin"), "password": env("PW")], environment: ["PW": "open sesame"]
        )
        #expect(received.headerLines.contains("Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="))
        // UTF-8 (RFC 7617 §2.1's example: "test" / "123£").
        let utf8 = try await send("basic", ["username": str("test"), "password": env("PW")], environment: ["PW": "123\u{A3}"])
        #expect(utf8.headerLines.contains("Authorization: Basic dGVzdDoxMjPCow=="))
    }

    @Test func basicRefusesAColonInTheUserName() {
        let context = AuthoriserContext(secrets: .system(environment: ["PW": "x"]), httpClient: Unreachable(), clock: { 0 })
        #expect {
            _ = try BasicPlugin.make(makeInstance("basic", ["username": str("a:b"), "password": env("PW")]), context: context)
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .invalidSetting && e?.description.contains("'username'") == true
        }
    }

    /// A secret with CR or LF would let its owner inject header lines: refused when the authoriser is made.
    @Test func headerInjectionIsRefused() {
        let context = AuthoriserContext(secrets: .system(environment: ["T": "x\r\nX-Evil: 1"]), httpClient: Unreachable(), clock: { 0 })
        for plugin in ["static-bearer", "api-key"] {
            let settings = plugin == "api-key" ? ["key": env("T")] : ["token": env("T")]
            #expect {
                _ = try AuthoriserRegistry.standard.makeAuthoriser(for: makeInstance(plugin, settings), context: context)
            } throws: { error in
                let e = error as? AuthoriserError
                return e?.kind == .invalidSetting && e?.description.contains("X-Evil") == false
            }
        }
    }
}

/// An HTTP client for plugins that must never use one.
struct Unreachable: AuthoriserHTTPClient {
    struct Used: Error {}
    func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        throw Used()
    }
}
