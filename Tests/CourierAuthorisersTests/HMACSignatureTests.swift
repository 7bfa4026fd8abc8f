import CourierAuthorisers
import CourierCore
import CourierCrypto
import CourierTestSupport
import CourierTransport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1))) struct HMACSignatureTests {
    private func signer(_ algorithm: String, signed: [String] = ["host", "date", "content-type"], clock: Double = 784_111_777) throws
        -> any Authoriser
    {
        let context = AuthoriserContext(secrets: .system(environment: ["HMAC_SECRET": "s3cret"]), httpClient: Unreachable(), clock: { clock })
        let settings: [String: PolicyValue] = [
            "key-id": str("k1"), "secret": env("HMAC_SECRET"), "algorithm": str(algorithm),
            "signed-headers": .list(signed.map(str)),
        ]
        return try HMACSignaturePlugin.make(makeInstance("hmac-signature", settings), context: context)
    }

    /// Expected values computed independently with Python's `hmac` and `hashlib` over the documented
    /// canonical string:
    /// `POST\n/v1/items?page=2\nhost:api.example.com\ndate:Sun, 06 Nov 1994 08:49:37 GMT\ncontent-type:application/json\n<sha256 hex of body>`.
    @Test(arguments: [
        ("hmac-sha256", "dGHpP1XckxIKsf2KtQNVY6tHz1GhXnbsx3eFdyPM8ZU="),
        ("hmac-sha512", "gS9l/sAv9rehWUZu0kCDfNYFIPlI8IY3HzRutO1oB7r/wt2n8LgI7s4FR8O60N1zAzC1LCs4h+falb4zQs6Crw=="),
    ])
    func signatureIsByteExact(_ algorithm: String, _ signature: String) async throws {
        let authoriser = try signer(algorithm)
        var request = AuthorisationRequest(
            method: .post, url: HTTPURL("https://api.example.com/v1/items?page=2")!,
            headers: ["Content-Type": "application/json"], body: Array(#"{"a":1}"#.utf8)
        )
        try await authoriser.authorise(&request)
        #expect(request.headers["Date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(
            request.headers["Signature"]
                == #"keyId="k1",algorithm="\#(algorithm)",headers="host date content-type",signature="\#(signature)""#
        )
        // The method, URL and body are not changed.
        #expect(request.method == .post)
        #expect(request.url.description == "https://api.example.com/v1/items?page=2")
    }

    @Test(arguments: [(951_782_400.0, "Tue, 29 Feb 2000 00:00:00 GMT"), (0, "Thu, 01 Jan 1970 00:00:00 GMT"), (1_795_349_515.9, "Sun, 22 Nov 2026 12:11:55 GMT")])
    func dateHeaderIsIMFFixdate(_ seconds: Double, _ expected: String) async throws {
        var request = AuthorisationRequest(url: HTTPURL("https://h/")!)
        try await signer("hmac-sha256", signed: ["date"], clock: seconds).authorise(&request)
        #expect(request.headers["Date"] == expected)
    }

    @Test func missingSignedHeaderIsAnError() async throws {
        let authoriser = try signer("hmac-sha256", signed: ["host", "date", "x-request-id"])
        var request = AuthorisationRequest(url: HTTPURL("https://h/")!)
        await #expect {
            try await authoriser.authorise(&request)
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .unsignableRequest && e?.description.contains("x-request-id") == true
        }
    }

    @Test func aStreamedBodyIsRefusedRatherThanSignedAsEmpty() async throws {
        let authoriser = try signer("hmac-sha256", signed: ["host", "date"])
        var request = AuthorisationRequest(method: .put, url: HTTPURL("https://h/upload")!, hasStreamedBody: true)
        await #expect {
            try await authoriser.authorise(&request)
        } throws: { error in
            (error as? AuthoriserError)?.kind == .unsignableRequest && "\(error)".contains("streamed")
        }
        #expect(request.headers["authorization"] == nil && request.headers["signature"] == nil)
    }

    @Test func badSettingsAreRefused() {
        let context = AuthoriserContext(secrets: .system(environment: ["S": "x"]), httpClient: Unreachable(), clock: { 0 })
        let bad: [[String: PolicyValue]] = [
            ["key-id": str("k"), "secret": env("S"), "algorithm": str("md5")],
            ["key-id": str("k\"1"), "secret": env("S")],
            ["key-id": str("k"), "secret": env("S"), "signed-headers": .list([])],
            ["key-id": str("k"), "secret": env("S"), "signed-headers": .list([str("bad header")])],
            ["key-id": str("k")],
        ]
        for settings in bad {
            #expect(throws: AuthoriserError.self) { try HMACSignaturePlugin.make(makeInstance("hmac-signature", settings), context: context) }
        }
    }

    /// Over loopback: the server recomputes the MAC from the request it received (Host and Date as sent, body
    /// as received) and finds the same signature.
    @Test func serverCanVerifyWhatArrives() async throws {
        let server = try RecordingServer { _, _ in .json(200, "{}") }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let context = AuthoriserContext(
            secrets: .system(environment: ["S": "shared-key"]), httpClient: TransportAuthoriserClient(client: client),
            clock: { Date().timeIntervalSince1970 }
        )
        let authoriser = try AuthoriserRegistry.standard.makeAuthoriser(
            for: makeInstance("hmac-signature", ["key-id": str("app"), "secret": env("S"), "algorithm": str("hmac-sha512")]),
            context: context
        )
        let body = Array("hello=world".utf8)
        var request = AuthorisationRequest(method: .put, url: HTTPURL(server.url("/sign/me?x=1"))!, body: body)
        try await authoriser.authorise(&request)
        _ = try await client.execute(HTTPRequest(method: request.method, url: request.url, headers: request.headers, body: .bytes(body)))
        let received = try #require(server.requests.first)
        let canonical = [
            "PUT", "/sign/me?x=1", "host:\(try #require(received.header("host")))", "date:\(try #require(received.header("date")))",
            SHA256.hex(SHA256.hash(received.body)),
        ].joined(separator: "\n")
        let mac = HMAC.authenticationCode(for: Array(canonical.utf8), key: Array("shared-key".utf8), algorithm: .sha512)
        #expect(received.header("signature") == #"keyId="app",algorithm="hmac-sha512",headers="host date",signature="\#(Base64.encode(mac))""#)
    }
}
