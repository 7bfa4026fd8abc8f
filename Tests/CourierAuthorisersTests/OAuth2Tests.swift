@testable import CourierAuthorisers
import CourierCore
import CourierTestSupport
import CourierTransport
import Foundation
import Synchronization
import Testing

/// Both OAuth 2 grants against a loopback token endpoint that reads the form body.
@Suite(.timeLimit(.minutes(1))) struct OAuth2Tests {
    private func token(_ access: String, expiresIn: Int? = 3600, refresh: String? = nil) -> String {
        var fields = [#""access_token":"\#(access)""#, #""token_type":"bearer""#]
        if let expiresIn { fields.append(#""expires_in":\#(expiresIn)"#) }
        if let refresh { fields.append(#""refresh_token":"\#(refresh)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    private func refreshSettings(_ server: RecordingServer, secret: Bool = false, scope: String? = nil) -> [String: PolicyValue] {
        var settings: [String: PolicyValue] = [
            "token-url": str(server.url("/oauth/token")), "client-id": str("my app"), "refresh-token": env("RT"),
            "refresh-before": .duration(.seconds(60)),
        ]
        if secret { settings["client-secret"] = env("CS") }
        if let scope { settings["scope"] = str(scope) }
        return settings
    }

    private func authorised(_ authoriser: any Authoriser) async throws -> AuthorisationRequest {
        var request = AuthorisationRequest(url: HTTPURL("https://api.example.com/v1/me")!)
        try await authoriser.authorise(&request)
        return request
    }

    @Test func refreshGrantFormAndBearerHeader() async throws {
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)")) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let context = makeContext(client: client, environment: ["RT": "rt/1+x", "CS": "s&cret"])
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server, secret: true, scope: "read write")), context: context
        )
        let request = try await authorised(authoriser)
        #expect(request.headers["Authorization"] == "Bearer at-0")
        let sent = try #require(server.requests.first)
        #expect(sent.requestLine == "POST /oauth/token HTTP/1.1")
        #expect(sent.header("content-type") == "application/x-www-form-urlencoded")
        #expect(sent.bodyText == "grant_type=refresh_token&refresh_token=rt%2F1%2Bx&scope=read+write&client_id=my+app")
        // RFC 6749 §2.3.1: id and secret form-encoded, then base64 ("my+app:s%26cret").
        #expect(sent.header("authorization") == "Basic " + Base64.encode(Array("my+app:s%26cret".utf8)))
        // The token is reused while valid: no second request.
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        #expect(server.requests.count == 1)
    }

    @Test func publicClientSendsNoBasicHeader() async throws {
        let server = try RecordingServer { _, _ in .json(200, token("at")) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"])
        )
        _ = try await authorised(authoriser)
        let sent = try #require(server.requests.first)
        #expect(sent.header("authorization") == nil)
        #expect(sent.bodyText == "grant_type=refresh_token&refresh_token=r&client_id=my+app")
    }

    @Test func expiryDrivenRefreshUsesTheRotatedRefreshToken() async throws {
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)", expiresIn: 3600, refresh: i == 0 ? "rt-rotated" : nil)) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let clock = ManualClock()
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "rt-0"], clock: clock)
        )
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        clock.advance(by: 3539)  // 61 s before expiry: still good
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        #expect(server.requests.count == 1)
        clock.advance(by: 2)  // 59 s before expiry: inside refresh-before
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-1")
        #expect(server.requests.count == 2)
        #expect(server.requests[0].bodyText.contains("refresh_token=rt-0&"))
        #expect(server.requests[1].bodyText.contains("refresh_token=rt-rotated&"))
        // No rotation the second time: the rotated token stays in use.
        clock.advance(by: 3600)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-2")
        #expect(server.requests[2].bodyText.contains("refresh_token=rt-rotated&"))
    }

    /// `refresh-before` (60 s) longer than the token's life (30 s): the token is still used for half its life.
    @Test func shortLivedTokensAreUsedForHalfTheirLife() async throws {
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)", expiresIn: 30)) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let clock = ManualClock()
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"], clock: clock)
        )
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        clock.advance(by: 14)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        clock.advance(by: 1)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-1")
        #expect(server.requests.count == 2)
    }

    @Test func tokenWithoutExpiryIsKeptUntilRefused() async throws {
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)", expiresIn: nil)) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let clock = ManualClock()
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"], clock: clock)
        )
        let first = try await authorised(authoriser)
        clock.advance(by: 86_400 * 365)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-0")
        // 401: the token is dropped; the next request refreshes.
        await authoriser.authorisationFailed(for: first)
        let second = try await authorised(authoriser)
        #expect(second.headers["Authorization"] == "Bearer at-1")
        // A late 401 for the old token does not drop the new one.
        await authoriser.authorisationFailed(for: first)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-1")
        #expect(server.requests.count == 2)
        // An explicit refresh always asks the endpoint.
        try await authoriser.refresh()
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer at-2")
    }

    @Test func clientCredentialsGrant() async throws {
        let server = try RecordingServer { i, _ in .json(200, #"{"access_token":"cc-\#(i)","token_type":"Bearer","expires_in":"120"}"#) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let clock = ManualClock()
        let settings: [String: PolicyValue] = [
            "token-url": str(server.url("/token")), "client-id": str("svc"), "client-secret": file(try secretFile("s3cret\n")),
            "scope": str("read write"), "audience": str("https://api.example.com"), "refresh-before": .duration(.seconds(30)),
        ]
        let authoriser = try AuthoriserRegistry.standard.makeAuthoriser(
            for: makeInstance("oauth2-client-credentials", settings), context: makeContext(client: client, clock: clock)
        )
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer cc-0")
        let sent = try #require(server.requests.first)
        #expect(sent.bodyText == "grant_type=client_credentials&scope=read+write&audience=https%3A%2F%2Fapi.example.com&client_id=svc")
        #expect(sent.header("authorization") == "Basic c3ZjOnMzY3JldA==")  // svc:s3cret, the file's newline removed
        clock.advance(by: 89)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer cc-0")
        clock.advance(by: 2)  // expires_in "120" (a string) minus refresh-before 30 s
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer cc-1")
        #expect(server.requests.count == 2)
    }

    /// 100 concurrent requests with no token share one token request.
    @Test func singleFlightRefresh() async throws {
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)"), delay: .milliseconds(200)) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"])
        )
        let headers = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<100 { group.addTask { try await authorised(authoriser).headers["Authorization"] } }
            var out: [String?] = []
            for try await h in group { out.append(h) }
            return out
        }
        #expect(headers.count == 100)
        #expect(Set(headers) == ["Bearer at-0"])
        #expect(server.requests.count == 1)

        // And all 100 get 401 at once: they drop the same token, and the next wave again shares one refresh.
        let refused = try await authorised(authoriser)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { await authoriser.authorisationFailed(for: refused) } }
        }
        let second = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<100 { group.addTask { try await authorised(authoriser).headers["Authorization"] } }
            var out: Set<String?> = []
            for try await h in group { out.insert(h) }
            return out
        }
        #expect(second == ["Bearer at-1"])
        #expect(server.requests.count == 2)
    }

    /// A caller cancelled while the refresh is in flight resumes at once; the refresh finishes for the others.
    @Test func cancelledWaiterResumesAtOnce() async throws {
        // The token endpoint takes 4 s; the cancelled caller must be back long before that, however loaded the
        // machine is.
        let server = try RecordingServer { i, _ in .json(200, token("at-\(i)"), delay: .milliseconds(4000)) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"])
        )
        let patient = Task { try await authorised(authoriser).headers["Authorization"] }
        let impatient = Task { try await authorised(authoriser) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        impatient.cancel()
        await #expect(throws: CancellationError.self) { try await impatient.value }
        #expect(ContinuousClock.now - started < .milliseconds(2500))
        #expect(try await patient.value == "Bearer at-0")
        #expect(server.requests.count == 1)
        // An already-cancelled task never parks.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await authoriser.refresh()
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test func concurrentFailuresShareOneRequestAndTheNextCallRetries() async throws {
        let server = try RecordingServer { i, _ in
            i == 0 ? .json(503, "{}", delay: .milliseconds(100)) : .json(200, token("ok"), delay: .milliseconds(100))
        }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server)), context: makeContext(client: client, environment: ["RT": "r"])
        )
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        _ = try await authorised(authoriser)
                        return false
                    } catch { return (error as? AuthoriserError)?.status == 503 }
                }
            }
            var count = 0
            for await failed in group where failed { count += 1 }
            return count
        }
        #expect(failures == 20)
        #expect(server.requests.count == 1)
        #expect(try await authorised(authoriser).headers["Authorization"] == "Bearer ok")
    }

    @Test(arguments: [
        (400, #"{"error":"invalid_grant","error_description":"refresh token rt-secret revoked"}"#, AuthoriserError.Kind.tokenEndpointStatus),
        (500, "oops", .tokenEndpointStatus),
        (200, "not json", .malformedTokenResponse),
        (200, #"["access_token"]"#, .malformedTokenResponse),
        (200, #"{"access_token":"a","expires_in":"soon"}"#, .malformedTokenResponse),
        (200, #"{"token_type":"bearer"}"#, .missingAccessToken),
        (200, #"{"access_token":""}"#, .missingAccessToken),
    ])
    func tokenEndpointErrorsAreTyped(_ status: Int, _ body: String, _ kind: AuthoriserError.Kind) async throws {
        let server = try RecordingServer { _, _ in .json(status, body) }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let authoriser = try OAuth2RefreshPlugin.make(
            makeInstance("oauth2-refresh", refreshSettings(server, secret: true)),
            context: makeContext(client: client, environment: ["RT": "rt-secret", "CS": "cs-secret"])
        )
        do {
            _ = try await authorised(authoriser)
            Issue.record("expected \(kind)")
        } catch let error as AuthoriserError {
            #expect(error.kind == kind)
            #expect(error.authoriser == "test-auth")
            if status != 200 { #expect(error.status == status) }
            if status == 400 { #expect(error.description.contains("invalid_grant")) }
            // Never a secret in the message, even when the server echoes one.
            for secret in ["rt-secret", "cs-secret"] { #expect(!error.description.contains(secret)) }
        }
    }

    @Test func unreachableTokenEndpoint() async throws {
        // A port bound but never listening: refused, and no other test's server can be given it meanwhile (a
        // stopped server's port once was, under load, and answered 200 with a body that was not a token).
        let closed = try ClosedPort()
        let url = closed.url("/token")
        let client = HTTPClient()
        defer { client.shutdown() }
        let settings: [String: PolicyValue] = ["token-url": str(url), "client-id": str("c"), "client-secret": env("CS")]
        let authoriser = try OAuth2ClientCredentialsPlugin.make(
            makeInstance("oauth2-client-credentials", settings), context: makeContext(client: client, environment: ["CS": "x"])
        )
        await #expect {
            _ = try await authorised(authoriser)
        } throws: { ($0 as? AuthoriserError)?.kind == .tokenRequestFailed }
        withExtendedLifetime(closed) {}
    }

    @Test func missingSecretsAreErrorsNamingThem() throws {
        let context = AuthoriserContext(secrets: .system(environment: [:]), httpClient: Unreachable(), clock: { 0 })
        let viaEnv: [String: PolicyValue] = ["token-url": str("https://a/t"), "client-id": str("c"), "refresh-token": env("MISSING_RT")]
        #expect {
            _ = try AuthoriserRegistry.standard.makeAuthoriser(for: makeInstance("oauth2-refresh", viaEnv, name: "spotify"), context: context)
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .missingSecret && e?.authoriser == "spotify" && e?.description.contains("MISSING_RT") == true
                && e?.description.contains("refresh-token") == true
        }
        let path = "/nonexistent/courier-secret-\(UInt64.random(in: 0...UInt64.max))"
        let viaFile: [String: PolicyValue] = ["token-url": str("https://a/t"), "client-id": str("c"), "client-secret": file(path)]
        #expect {
            _ = try AuthoriserRegistry.standard.makeAuthoriser(for: makeInstance("oauth2-client-credentials", viaFile), context: context)
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .missingSecret && e?.description.contains(path) == true
        }
        let noURL: [String: PolicyValue] = ["token-url": str("ftp://x"), "client-id": str("c"), "refresh-token": str("r")]
        #expect {
            _ = try OAuth2RefreshPlugin.make(makeInstance("oauth2-refresh", noURL), context: context)
        } throws: { ($0 as? AuthoriserError)?.kind == .invalidSetting }
    }
}

/// Writes `contents` to a fresh temporary file and returns its path.
func secretFile(_ contents: String) throws -> String {
    let path = NSTemporaryDirectory() + "courier-secret-\(UInt64.random(in: 0...UInt64.max))"
    try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    return path
}
