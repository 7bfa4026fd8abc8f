import CourierCore
import CourierTransport
import Synchronization
import Testing

/// The bare client with protocol plugins: `data:` by default, whole and streamed, a scheme nobody claims refused, a
/// plugin's redirect followed within its scheme, a plugin claiming http answering with no socket, and a body
/// larger than `maxBodyBytes` refused as a server's would be.
@Suite(.timeLimit(.minutes(1))) struct HTTPClientProtocolPluginTests {
    /// `memo:` (or http, when asked): `/old` redirects to `/new`; `/big` is 3 chunks of 1000 bytes; the rest echoes
    /// the path and the request body.
    final class Memo: ProtocolPlugin {
        let schemes: [String]
        let calls = Mutex(0)
        init(schemes: [String] = ["memo"]) { self.schemes = schemes }

        func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
            calls.withLock { $0 += 1 }
            switch request.url.path {
            case "/old":
                return ProtocolResponse(status: 302, headers: ["Location": "/new"])
            case "/escape":
                return ProtocolResponse(status: 302, headers: ["Location": "file:///etc/hosts"])
            case "/big":
                let left = Mutex(3)
                return ProtocolResponse(status: 200, body: ProtocolBody(next: {
                    left.withLock { n in
                        guard n > 0 else { return nil }
                        n -= 1
                        return [UInt8](repeating: UInt8(n), count: 1000)
                    }
                }))
            default:
                let sent = try await request.body.collect(upTo: 1 << 20)
                return ProtocolResponse(status: 200, reason: "OK", body: .bytes(Array("\(request.method) \(request.url.path) ".utf8) + sent))
            }
        }
    }

    @Test func dataIsAnsweredWholeAndStreamedAndOtherSchemesAreRefused() async throws {
        let client = HTTPClient()
        defer { client.shutdown() }
        let data = try #require(HTTPURL(anyScheme: "data:,hello%20there"))
        let whole = try await client.execute(HTTPRequest(url: data))
        #expect(whole.status == 200)
        #expect(whole.body == Array("hello there".utf8))
        #expect(whole.headers["content-type"] == "text/plain;charset=US-ASCII")
        #expect(whole.metrics.bytesReceived == 11)
        let streamed = try await client.stream(HTTPRequest(url: data))
        var bytes: [UInt8] = []
        for try await chunk in streamed.body { bytes += chunk }
        #expect(bytes == Array("hello there".utf8))
        #expect(client.openConnectionCount == 0)

        await expectKind(.policy) { _ = try await client.execute(HTTPRequest(url: try #require(HTTPURL(anyScheme: "file:///etc/hosts")))) }
        await expectKind(.policy) { _ = try await client.execute(HTTPRequest(url: try #require(HTTPURL(anyScheme: "memo://x/")))) }
    }

    @Test func aPluginsRedirectIsFollowedInItsSchemeAndItsBodyLimited() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.protocols = ProtocolRegistry([Memo()])
        configuration.maxBodyBytes = 2500
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        let redirected = try await client.execute(HTTPRequest(method: .post, url: try #require(HTTPURL(anyScheme: "memo://notes/old")), body: .bytes([65])))
        #expect(redirected.status == 200)
        #expect(redirected.url.description == "memo://notes/new")
        #expect(String(decoding: redirected.body, as: UTF8.self) == "GET /new ", "a 302 after POST is followed with GET, as RFC 9110 says")
        #expect(redirected.metrics.redirects == 1)
        // A redirect never leads to a scheme of another plugin (a server's to file: least of all).
        var withFile = configuration
        withFile.protocols = ProtocolRegistry([Memo(), FileProtocol(root: "/")])
        let fileClient = HTTPClient(configuration: withFile)
        defer { fileClient.shutdown() }
        await expectKind(.protocol) { _ = try await fileClient.execute(HTTPRequest(url: try #require(HTTPURL(anyScheme: "memo://notes/escape")))) }

        await expectKind(.bodyTooLarge) { _ = try await client.execute(HTTPRequest(url: try #require(HTTPURL(anyScheme: "memo://notes/big")))) }
        let streamed = try await client.stream(HTTPRequest(url: try #require(HTTPURL(anyScheme: "memo://notes/big"))))
        var total = 0
        for try await chunk in streamed.body { total += chunk.count }
        #expect(total == 3000, "a stream has no body limit")
    }

    @Test func aPluginClaimingHTTPAnswersWithoutASocket() async throws {
        let memo = Memo(schemes: ["http"])
        var configuration = HTTPClientConfiguration()
        configuration.protocols = ProtocolRegistry([memo])
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        // A port nothing listens on, a name that does not resolve: only the plugin can answer.
        let response = try await client.execute(HTTPRequest(method: .put, url: url("http://nowhere.invalid:1/x"), body: .bytes(Array("b".utf8))))
        #expect(String(decoding: response.body, as: UTF8.self) == "PUT /x b")
        #expect(memo.calls.withLock { $0 } == 1)
        #expect(client.openConnectionCount == 0)
        // https is not claimed: it still goes to the network (and fails to resolve).
        await expectKind(.resolve) { _ = try await client.execute(HTTPRequest(url: url("https://nowhere.invalid:1/x"))) }
    }
}
