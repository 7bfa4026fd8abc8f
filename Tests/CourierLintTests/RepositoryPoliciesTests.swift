import CourierLint
import Testing

/// The repository's own policies/ must stay lint-clean under --strict, as CI dogfoods them.
@Suite struct RepositoryPoliciesTests {
    static let policies = Fixtures.repositoryRoot + "/policies"

    @Test func repositoryPoliciesAreStrictlyClean() throws {
        let report = try LintRunner().run(paths: [Self.policies])
        #expect(!report.files.isEmpty, "policies/ holds no policy file")
        #expect(report.diagnostics.isEmpty, "\(TextFormatter().format(report))")
        #expect(report.exitStatus(strict: true) == .success)
    }
}
