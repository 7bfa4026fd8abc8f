import CourierCore
import CourierLint
import CourierPolicy
import CourierTestSupport
import Foundation
import Testing

/// `courier lint` on the inputs fuzzing found (issue 12): CPU time proportional to the file's size, and at most
/// `maxDiagnosticsPerFile` diagnostics printed per file, then one line counting the rest.
@Suite(.serialized) struct LintOutputBoundTests {
    /// Lints `yaml` as a file, formats it as text, and returns the text and the linting thread's CPU time.
    static func timedLint(_ yaml: String) async throws -> (String, Duration) {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("hostile.yaml", yaml)
        return await offThePool {
            var text = ""
            let elapsed = threadCPUTime { text = TextFormatter().format(LintRunner().lint(files: [path])) }
            return (text, elapsed)
        }
    }

    /// The diagnostic lines of text output (suggestions are the indented lines).
    static func diagnosticLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.hasPrefix(" ") }
    }

    @Test func aLongUnknownAuthoriserBesideANearOneLintsInLinearTime() async throws {
        let yaml = HostilePolicies.nearLongAuthoriserNames(length: 100_000)
        let (text, elapsed) = try await Self.timedLint(yaml)
        let lines = Self.diagnosticLines(text)
        // The declared authoriser is unused (a warning); the service's is unknown (an error).
        #expect(lines.map { $0.split(separator: " ").last ?? "" } == ["[unused-authoriser]", "[unknown-authoriser]"])
        #expect(text.utf8.count < 1_000, "the 100,000-character name is quoted shortened")
        #expect(elapsed < HostilePolicies.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }

    @Test func aliasedDuplicateKeysPrintTheCapThenTheCount() async throws {
        let yaml = HostilePolicies.aliasedDuplicateKeys(keyLength: 100_000, aliases: 8_000)
        let (text, elapsed) = try await Self.timedLint(yaml)
        let lines = Self.diagnosticLines(text)
        let cap = PolicyLimits.default.maxDiagnosticsPerFile
        #expect(lines.count == cap + 1)
        #expect(lines.dropLast().allSatisfy { !$0.hasSuffix("[too-many-diagnostics]") })
        #expect(lines.last?.hasSuffix("warning: 7901 more diagnostics in this file are not shown: 7901 errors, 0 warnings [too-many-diagnostics]") == true)
        #expect(text.utf8.count < 40_000, "\(text.utf8.count) bytes printed for \(yaml.utf8.count) bytes of input")
        #expect(elapsed < HostilePolicies.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }
}
