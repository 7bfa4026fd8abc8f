import CourierCore
import CourierPolicy
import Foundation
import Testing

/// The committed JSON Schema (what editors check policies with) accepts the example policies and the coordination
/// keys, and refuses what the compiler refuses in their shape.
@Suite struct SchemaValidationTests {
    static let examples = ["music-streaming.yaml", "minimal.yaml", "common.yaml", "fleet.yaml", "demo.yaml"]

    @Test(arguments: examples)
    func examplePolicyValidates(_ name: String) throws {
        let text = try #require(readText(Fixtures.policies + "/" + name))
        let errors = try JSONSchemaValidator.committed().validate(JSONSchemaValidator.instance(yaml: text))
        #expect(errors.isEmpty, "\(errors.joined(separator: "\n"))")
    }

    @Test(arguments: ["coordination-fails-open", "shared-tokens-unsupported", "shared-tokens-without-token-key", "fleet-scope-without-coordination"])
    func coordinationFixturesHaveAValidShape(_ rule: String) throws {
        // These break rules that need the whole policy, not the shape a schema can check.
        let text = try #require(readText(Fixtures.path("rules/\(rule).yaml")))
        let errors = try JSONSchemaValidator.committed().validate(JSONSchemaValidator.instance(yaml: text))
        #expect(errors.isEmpty, "\(errors.joined(separator: "\n"))")
    }

    /// Each of these is one mistake in an otherwise valid fleet policy; the schema must catch it.
    @Test(arguments: [
        ("on-unavailable: local", "on-unavailable: sometimes"),
        ("scope: fleet", "scope: global"),
        ("share-tokens: true", "share-tokens: \"yes\""),
        ("timeout: 20ms", "timeout: 20"),
        ("key-prefix: \"courier:orders:\"", "key-prefix: \"has space\""),
        ("url: \"redis://127.0.0.1:6379/0\"", "url: \"redis://app:secret@127.0.0.1:6379/0\""),
        ("url: \"redis://127.0.0.1:6379/0\"", "url: \"https://127.0.0.1:6379/0\""),
        ("url: \"redis://127.0.0.1:6379/0\"", "url: \"redis://::1/0\""),
        ("username: courier", "usernme: courier"),
        ("  on-unavailable: local", "  on-unavailable: local\n  retry: 3"),
        ("/v2/reports: { requests-per-second: 1 }", "/v2/reports: { requests-per-second: 1, scope: everyone }"),
        ("    url: \"redis://127.0.0.1:6379/0\"", "    urls: \"redis://127.0.0.1:6379/0\""),
    ])
    func oneMistakeInTheFleetExampleFailsValidation(_ original: String, _ broken: String) throws {
        let text = try #require(readText(Fixtures.policies + "/fleet.yaml"))
        #expect(text.contains(original), "the example changed: \(original)")
        let validator = try JSONSchemaValidator.committed()
        let mutated = text.replacingOccurrences(of: original, with: broken)
        #expect(!validator.validate(try JSONSchemaValidator.instance(yaml: mutated)).isEmpty, "\(broken) passed")
    }

    @Test func theURLPatternAgreesWithTheCompiler() throws {
        let validator = try JSONSchemaValidator.committed()
        for url in ["redis://h", "redis://h:6379", "rediss://h:6380/2", "redis://[::1]:6379/0", "redis://10.0.0.1/15", "redis://h/",
                    "http://h", "redis://u:p@h", "redis://u@h", "redis://h?x=1", "redis://::1", "redis://", "redis://h/x"] {
            let policy = "version: 1\ncoordination:\n  redis:\n    url: \"\(url)\"\n"
            let schemaAccepts = validator.validate(try JSONSchemaValidator.instance(yaml: policy)).isEmpty
            let compilerAccepts = compile(policy).diagnostics.isEmpty
            #expect(schemaAccepts == compilerAccepts, "\(url): schema \(schemaAccepts), compiler \(compilerAccepts)")
        }
    }
}
