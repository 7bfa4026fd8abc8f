import CourierCore
import CourierPolicy
import Foundation
import Testing

@Suite struct SchemaTests {
    static func schema(_ registry: AuthoriserRegistry = .builtIn) throws -> [String: Any] {
        let text = PolicySchema.jsonSchema(registry: registry)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    /// Every key the language has, from the schema's `properties` (plugin settings excluded).
    static func languageKeys() throws -> Set<String> {
        var keys: Set<String> = []
        func walk(_ value: Any, inSettings: Bool) {
            if let object = value as? [String: Any] {
                for (k, v) in object {
                    if k == "properties", let props = v as? [String: Any], !inSettings {
                        keys.formUnion(props.keys)
                        for (name, child) in props { walk(child, inSettings: name == "settings") }
                    } else {
                        walk(v, inSettings: inSettings)
                    }
                }
            } else if let array = value as? [Any] {
                for item in array { walk(item, inSettings: inSettings) }
            }
        }
        walk(try schema(), inSettings: false)
        return keys
    }

    @Test func schemaIsValidJSONDescribingTheLanguage() throws {
        let root = try Self.schema()
        #expect(root["$schema"] as? String == "http://json-schema.org/draft-07/schema#")
        let properties = try #require(root["properties"] as? [String: Any])
        #expect(Set(properties.keys) == ["version", "include", "defaults", "authorisers", "services", "coordination"])
        #expect(root["additionalProperties"] as? Bool == false)
        #expect(root["required"] as? [String] == ["version"])
        let services = try #require(properties["services"] as? [String: Any])
        let service = try #require(services["additionalProperties"] as? [String: Any])
        #expect(service["additionalProperties"] as? Bool == false, "misspelt service keys are flagged by editors")
        let serviceKeys = try #require(service["properties"] as? [String: Any])
        #expect(Set(serviceKeys.keys) == ["hosts", "scheme", "authoriser", "rate-limit", "retry", "timeouts", "fallbacks", "tls", "proxy", "cache", "propagate-trace-context", "connect-to"])
        let keys = try Self.languageKeys()
        for key in ["max-attempts", "jitter", "budget", "min-per-second", "idempotency-key", "retry-after-cap", "endpoints", "pins", "ca-file", "min-version", "ttl", "max-size", "allow-plain-http", "scope", "share-tokens", "on-unavailable", "url", "username", "password", "key-prefix", "token-key", "client-certificate", "client-key", "client-key-password", "connect-to"] {
            #expect(keys.contains(key), "\(key) missing from the schema")
        }
    }

    @Test func pluginSettingsAreCheckedPerPluginType() throws {
        let registry = AuthoriserRegistry.builtIn.registering(AuthoriserTypeDescriptor(
            type: "acme-sso", summary: "t", settings: [.init("realm", .string, required: true, "r")]))
        let root = try Self.schema(registry)
        let authorisers = try #require((root["properties"] as? [String: Any])?["authorisers"] as? [String: Any])
        let authoriser = try #require(authorisers["additionalProperties"] as? [String: Any])
        let conditions = try #require(authoriser["allOf"] as? [[String: Any]])
        // One enum of plugin types, then one if/then per type.
        #expect(conditions.count == 1 + registry.typeNames.count)
        var required: [String: [String]] = [:]
        for condition in conditions.dropFirst() {
            let plugin = try #require(((condition["if"] as? [String: Any])?["properties"] as? [String: Any])?["plugin"] as? [String: Any])
            let type = try #require(plugin["const"] as? String)
            let settings = try #require(((condition["then"] as? [String: Any])?["properties"] as? [String: Any])?["settings"] as? [String: Any])
            #expect(settings["additionalProperties"] as? Bool == false)
            required[type] = settings["required"] as? [String] ?? []
        }
        #expect(required["oauth2-refresh"] == ["token-url", "client-id", "refresh-token"])
        #expect(required["acme-sso"] == ["realm"])
        #expect(Set(required.keys) == Set(registry.typeNames))
    }

    @Test func durationPatternAgreesWithTheCompiler() throws {
        let root = try Self.schema()
        let defaults = try #require((root["properties"] as? [String: Any])?["defaults"] as? [String: Any])
        let timeouts = try #require((defaults["properties"] as? [String: Any])?["timeouts"] as? [String: Any])
        let total = try #require((timeouts["properties"] as? [String: Any])?["total"] as? [String: Any])
        let pattern = try #require(total["pattern"] as? String)
        let regex = try NSRegularExpression(pattern: pattern)
        func matches(_ s: String) -> Bool { regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil }
        for good in ["250ms", "5s", "2m", "1h", "1h30m", "1.5s", "1d"] {
            #expect(matches(good), "\(good)")
            #expect(DurationFormat.parse(good) != nil, "\(good)")
        }
        for bad in ["5", "5 s", "30m1h", "5x", "s"] {
            #expect(!matches(bad), "\(bad)")
            #expect(DurationFormat.parse(bad) == nil, "\(bad)")
        }
    }

    /// policies/policy.schema.json is the generated schema, so the modelines in policies/ point at the truth.
    /// Regenerate with `COURIER_REGENERATE_SCHEMA=1 swift test --filter committedSchemaIsCurrent`.
    @Test func committedSchemaIsCurrent() throws {
        let path = Fixtures.policies + "/policy.schema.json"
        if getenv("COURIER_REGENERATE_SCHEMA") != nil { try writeFile(path, PolicySchema.jsonSchema()) }
        let committed = try #require(readText(path), "regenerate with COURIER_REGENERATE_SCHEMA=1")
        #expect(committed == PolicySchema.jsonSchema(), "policies/policy.schema.json is stale; regenerate it from PolicySchema.jsonSchema()")
    }
}

@Suite struct DocumentationTests {
    static let docs: String = {
        let here = #filePath
        var parts = here.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/docs/policy.md"
    }()

    @Test func everyRuleIsDocumentedWithItsSeverity() throws {
        let text = try #require(readText(Self.docs))
        for rule in PolicyRule.all {
            #expect(text.contains("| `\(rule.id)` | \(rule.severity.rawValue) | \(rule.summary) |"), "docs/policy.md lacks \(rule.id)")
        }
    }

    @Test func everyKeyIsDocumented() throws {
        let text = try #require(readText(Self.docs))
        for key in try SchemaTests.languageKeys() {
            #expect(text.contains("`\(key)`") || text.contains("`\(key).") || text.contains(".\(key)`"), "docs/policy.md does not mention \(key)")
        }
    }
}
