import CourierLint
import Foundation
import Testing

/// The repository's own policies/ must stay lint-clean under --strict, as CI dogfoods them.
@Suite struct RepositoryPoliciesTests {
    static let policies = Fixtures.repositoryRoot + "/policies"

    // Enabled once policies/ exists (the policy branch adds it).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: RepositoryPoliciesTests.policies)))
    func repositoryPoliciesAreStrictlyClean() throws {
        let report = try LintRunner().run(paths: [Self.policies])
        #expect(!report.files.isEmpty, "policies/ holds no policy file")
        #expect(report.diagnostics.isEmpty, "\(TextFormatter().format(report))")
        #expect(report.exitStatus(strict: true) == .success)
    }
}
