import CourierTestSupport
import Foundation
import Testing

@Suite(.onBlockingThreads) struct ExplainCommandTests {
    @Test func textOutput() async throws {
        let r = try await CourierProcess.run(["explain", "clean/app.yaml", "https://api.example.com/v1/search/tracks?q=x"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        try GoldenFile.check(r.stdout, named: "explain-search.text")
    }

    @Test func jsonOutputForAPostThatIsNotRetried() async throws {
        let r = try await CourierProcess.run(
            ["explain", "clean/app.yaml", "https://eu.api.example.com/v2/me", "-X", "post", "--format", "json"]
        )
        #expect(r.status == 0)
        try GoldenFile.check(r.stdout, named: "explain-post.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["method"] as? String == "POST")
        #expect((object["worstCase"] as? [String: Any])?["attempts"] as? Int == 1)
    }

    @Test func fleetLimitShowsItsScopeBackendAndFailureMode() async throws {
        let r = try await CourierProcess.run(["explain", "fleet/app.yaml", "https://partner.example.com/v2/orders"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        try GoldenFile.check(r.stdout, named: "explain-fleet.text")
        #expect(r.stdout.contains("for the whole fleet"))
        #expect(!r.stdout.contains("REDIS_PASSWORD"), "explain never prints the backend's credentials")

        let json = try await CourierProcess.run(["explain", "fleet/app.yaml", "https://partner.example.com/v2/orders", "--format", "json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let coordination = try #require(object["coordination"] as? [String: Any])
        #expect(coordination["backend"] as? String == "redis://127.0.0.1:6379/0")
        #expect(coordination["onUnavailable"] as? String == "local")
        #expect(coordination["sharedTokensAuthoriser"] as? String == "partner-oauth")
        #expect(((object["worstCase"] as? [String: Any])?["rateLimit"] as? [String: Any])?["scope"] as? String == "fleet")
    }

    @Test func secretsAreNeverResolved() async throws {
        let r = try await CourierProcess.run(["explain", "clean/app.yaml", "https://api.example.com/"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("${env:WEB_TOKEN}"))
    }

    @Test func policyWithErrorsIsStatusOne() async throws {
        let r = try await CourierProcess.run(["explain", "broken/typo.yaml", "https://api.example.com/"])
        #expect(r.status == 1)
        #expect(r.stdout == "")
        #expect(r.stderr.contains("broken/typo.yaml:4:3: error: unknown key 'retires' in defaults [unknown-key]"))
        #expect(r.stderr.contains("does not compile"))
    }

    @Test(arguments: [
        (["explain", "clean/app.yaml", "ftp://example.com/"], "is not an absolute http or https URL"),
        (["explain", "clean/app.yaml", "/relative"], "is not an absolute http or https URL"),
        // Brackets hold an IPv6 address only (issue 12: `[１]` made fetch exit 6, `[1]:9` fetched host 1).
        (["explain", "clean/app.yaml", "http://[1]:9/"], "is not an absolute http or https URL"),
        (["fetch", "http://[１]/"], "is not an absolute http or https URL"),
        (["fetch", "http://[1]:9/"], "is not an absolute http or https URL"),
        (["explain", "clean/app.yaml", "https://example.com/", "-X", "GE T"], "is not a valid HTTP method"),
        (["explain", "clean/app.yaml"], "Missing expected argument '<url>'"),
        (["explain", "nope.yaml", "https://example.com/"], "no such policy file: 'nope.yaml'"),
        (["explain", "clean", "https://example.com/"], "no such policy file: 'clean'"),
    ])
    func badInputIsStatusTwo(arguments: [String], message: String) async throws {
        let r = try await CourierProcess.run(arguments)
        #expect(r.status == 2)
        #expect(r.stdout == "")
        #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
    }
}

@Suite(.onBlockingThreads) struct SchemaCommandTests {
    @Test func printsAJSONSchema() async throws {
        let r = try await CourierProcess.run(["schema"])
        #expect(r.status == 0)
        #expect(r.stderr == "")
        #expect(r.stdout.hasSuffix("}\n"))
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect((schema["$schema"] as? String)?.contains("json-schema.org") == true)
        let properties = try #require(schema["properties"] as? [String: Any])
        for key in ["version", "include", "defaults", "authorisers", "services"] {
            #expect(properties[key] != nil, "schema lacks \(key)")
        }
    }

    @Test func committedSchemaCopyIsCurrent() async throws {
        let r = try await CourierProcess.run(["schema"])
        let committed = try String(
            contentsOf: CourierProcess.repositoryRoot.appending(path: "policies/policy.schema.json"), encoding: .utf8
        )
        #expect(r.stdout == committed, "regenerate with: swift run courier schema > policies/policy.schema.json")
    }
}
