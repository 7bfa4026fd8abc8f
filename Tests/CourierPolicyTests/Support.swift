import CourierCore
import CourierPolicy
import Testing

/// Paths and helpers shared by the policy tests.
enum Fixtures {
    /// The Fixtures directory in the source tree (tests read real files, includes and all).
    static let directory: String = {
        let here = #filePath
        return String(here[..<here.lastIndex(of: "/")!]) + "/Fixtures"
    }()

    static func path(_ relative: String) -> String { directory + "/" + relative }

    /// The repository's policies/ directory.
    static let policies: String = {
        let here = #filePath
        var parts = here.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/CourierPolicyTests/Support.swift
        return parts.joined(separator: "/") + "/policies"
    }()
}

extension PolicyCompilation {
    /// "rule@line" for each diagnostic, for compact expectations.
    var summary: [String] { diagnostics.map { "\($0.rule)@\($0.location.line)" } }

    func rules(_ id: String) -> [Diagnostic] { diagnostics.filter { $0.rule == id } }
}

/// Compiles YAML text as a file in the fixtures directory (so relative paths resolve there).
func compile(_ yaml: String, limits: PolicyLimits = .default, name: String = "inline.yaml") -> PolicyCompilation {
    PolicyCompiler(limits: limits).compile(source: yaml, path: Fixtures.path(name))
}

/// Compiles `yaml` and expects exactly one diagnostic: of `rule`, saying `message`, at the first `at` of the first
/// line that holds it.
func expectOneDiagnostic(_ yaml: String, rule: String, at: String, message: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let result = compile(yaml)
    #expect(result.diagnostics.count == 1, "\(result.diagnostics)", sourceLocation: sourceLocation)
    guard let d = result.diagnostics.first else { return }
    #expect(d.rule == rule, sourceLocation: sourceLocation)
    #expect(d.message.contains(message), "\(d.message)", sourceLocation: sourceLocation)
    let line = (yaml.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(at) } ?? -1) + 1
    #expect(d.location.line == line, sourceLocation: sourceLocation)
    #expect(d.location.column == column(of: at, inLine: line, of: yaml), sourceLocation: sourceLocation)
}
