import CourierCore
import CourierPolicy
import Testing

/// One bad file per rule in Fixtures/rules/<rule-id>.yaml. Lines that must carry a diagnostic end with
/// `# expect: rule-id[, rule-id]`; the compiler must report exactly those rule@line pairs in every file it
/// reads (root and includes), nothing more and nothing less.
@Suite struct RuleFixtureTests {
    /// Rules whose trigger cannot be written as a fixture file; each has a dedicated test elsewhere.
    static let coveredElsewhere: Set<String> = [
        "file-unreadable", "file-too-large", "invalid-encoding", "nesting-too-deep", "too-many-includes",
        "too-many-diagnostics",
        // A key file's mode cannot be stored in git (a checkout makes it whatever the umask says): ClientIdentityPolicyTests.
        "client-key-readable",
    ]

    static var fixtureRules: [String] {
        PolicyRule.all.map(\.id).filter { !coveredElsewhere.contains($0) }
    }

    @Test(arguments: fixtureRules)
    func ruleFixture(_ rule: String) throws {
        let path = Fixtures.path("rules/\(rule).yaml")
        let result = PolicyCompiler().compile(file: path)
        var expected: [String] = []
        for file in result.files {
            let text = try #require(readText(file), "cannot read \(file)")
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard let marker = markerText(line) else { continue }
                for id in marker.split(separator: ",") {
                    expected.append("\(file):\(id.trimmingCharacters(in: " "))@\(index + 1)")
                }
            }
        }
        let actual = result.diagnostics.map { "\($0.location.file):\($0.rule)@\($0.location.line)" }
        #expect(actual.sorted() == expected.sorted(), "\(result.diagnostics.map { "\($0)  -- \($0.suggestion ?? "")" }.joined(separator: "\n"))")
        #expect(expected.contains { $0.contains(":\(rule)@") }, "the fixture must exercise its own rule")
        // Errors mean no graph; warnings alone still compile.
        let severity = try #require(PolicyRule.named(rule)).severity
        if severity == .error { #expect(result.graph == nil) } else { #expect(result.graph != nil) }
        for d in result.diagnostics {
            #expect(PolicyRule.named(d.rule)?.severity == d.severity, "\(d.rule) reported with the wrong severity")
            #expect(d.location.column >= 1)
        }
    }

    @Test func everyRuleHasAFixtureOrATest() {
        for rule in PolicyRule.all where !Self.coveredElsewhere.contains(rule.id) {
            #expect(readText(Fixtures.path("rules/\(rule.id).yaml")) != nil, "no fixture for \(rule.id)")
        }
        #expect(Set(PolicyRule.all.map(\.id)).count == PolicyRule.all.count, "rule ids are unique")
        for rule in PolicyRule.all {
            #expect(rule.id.allSatisfy { $0.isLowercase || $0 == "-" || $0.isNumber }, "\(rule.id) is kebab-case")
        }
    }

    @Test func suggestionsNameTheNearestKey() throws {
        let result = PolicyCompiler().compile(file: Fixtures.path("rules/unknown-key.yaml"))
        let messages = result.rules("unknown-key").map { "\($0.message) | \($0.suggestion ?? "")" }
        #expect(messages.contains("unknown key 'retires' in defaults | did you mean 'retry'?"))
        #expect(messages.contains("unknown key 'conect' in timeouts | did you mean 'connect'?"))
        #expect(messages.contains("unknown key 'shceme' in a service | did you mean 'scheme'?"))
        #expect(messages.contains("unknown key 'servces' in the policy | did you mean 'services'?"))
        // Locations point at the key itself.
        let retires = try #require(result.rules("unknown-key").first { $0.message.contains("'retires'") })
        #expect(retires.location.line == 3 && retires.location.column == 3)
    }

    @Test func valueDiagnosticsPointAtTheValue() throws {
        let result = PolicyCompiler().compile(file: Fixtures.path("rules/invalid-max-attempts.yaml"))
        let first = try #require(result.rules("invalid-max-attempts").first)
        #expect(first.location.line == 3)
        #expect(first.location.column == 26)  // the 0 in "retry: { max-attempts: 0 }"
    }

    @Test func bareNumberDurationSaysWriteSeconds() throws {
        let result = compile("version: 1\ndefaults:\n  timeouts: { total: 5 }\n")
        let d = try #require(result.diagnostics.first)
        #expect(d.rule == "wrong-type")
        #expect(d.suggestion == "write 5s (or 5ms)")
    }
}

func readText(_ path: String) -> String? {
    guard let bytes = try? readBytes(path) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// The text after "# expect: " on a line, if any.
func markerText(_ line: Substring) -> Substring? {
    let needle = "# expect: "
    var rest = line
    while let hash = rest.firstIndex(of: "#") {
        let candidate = rest[hash...]
        if candidate.hasPrefix(needle) { return candidate.dropFirst(needle.count) }
        rest = rest[rest.index(after: hash)...]
    }
    return nil
}

@Suite struct CascadeTests {
    /// One mistake, one diagnostic: a broken declaration does not also make its users "unknown".
    @Test func brokenDeclarationsDoNotCascade() {
        let yaml = """
        version: 1
        authorisers:
          noplugin: { settings: {} }
          notamap: [1, 2]
        services:
          a: { hosts: [a.example.com], authoriser: noplugin }
          b: { hosts: [b.example.com], authoriser: notamap }
          c: just-a-string
        """
        #expect(compile(yaml).summary == ["missing-setting@3", "wrong-type@4", "wrong-type@8"])
    }
}
