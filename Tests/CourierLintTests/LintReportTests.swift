import CourierCore
import CourierLint
import Testing

@Suite struct LintReportTests {
    func diagnostic(_ severity: Diagnostic.Severity, _ file: String, _ line: Int, _ rule: String = "r") -> Diagnostic {
        Diagnostic(severity, rule: rule, message: "m \(line)", at: CourierCore.SourceLocation(file: file, line: line, column: 1))
    }

    @Test func duplicateDiagnosticsAndFilesAreKeptOnce() {
        let d = diagnostic(.error, "common.yaml", 3)
        let report = LintReport(files: ["app.yaml", "common.yaml", "common.yaml"], diagnostics: [d, d, d])
        #expect(report.files == ["app.yaml", "common.yaml"])
        #expect(report.diagnostics == [d])
        #expect(report.errorCount == 1)
    }

    @Test func sameRuleAtADifferentPlaceIsNotADuplicate() {
        let report = LintReport(files: [], diagnostics: [diagnostic(.error, "a.yaml", 3), diagnostic(.error, "a.yaml", 4)])
        #expect(report.diagnostics.count == 2)
    }

    @Test func diagnosticsAreSortedByFileLineAndColumn() {
        let report = LintReport(
            files: [],
            diagnostics: [diagnostic(.warning, "b.yaml", 1), diagnostic(.error, "a.yaml", 10), diagnostic(.error, "a.yaml", 2)]
        )
        #expect(report.diagnostics.map(\.location.description) == ["a.yaml:2:1", "a.yaml:10:1", "b.yaml:1:1"])
    }

    @Test func exitStatusFollowsTheContract() {
        let clean = LintReport(files: ["a.yaml"], diagnostics: [])
        let warnings = LintReport(files: ["a.yaml"], diagnostics: [diagnostic(.warning, "a.yaml", 1)])
        let errors = LintReport(files: ["a.yaml"], diagnostics: [diagnostic(.error, "a.yaml", 1), diagnostic(.warning, "a.yaml", 2)])
        #expect(clean.exitStatus(strict: false) == .success)
        #expect(clean.exitStatus(strict: true) == .success)
        #expect(warnings.exitStatus(strict: false) == .success)
        #expect(warnings.exitStatus(strict: true) == .failure)
        #expect(errors.exitStatus(strict: false) == .failure)
        #expect(errors.exitStatus(strict: true) == .failure)
        #expect(LintExitStatus.allCases.map(\.rawValue) == [0, 1, 2])
    }

    @Test func summaryCountsFilesErrorsAndWarnings() {
        let report = LintReport(files: ["a.yaml"], diagnostics: [diagnostic(.warning, "a.yaml", 1), diagnostic(.warning, "a.yaml", 2)])
        #expect(report.summary == "1 file: 0 errors, 2 warnings")
    }

    @Test func pathsUnderTheBaseBecomeRelative() {
        let report = LintReport(
            files: ["/repo/policies/a.yaml", "./b.yaml", "/elsewhere/c.yaml"],
            diagnostics: [diagnostic(.error, "/repo/./policies//a.yaml", 1), diagnostic(.error, "/repository/x.yaml", 1)]
        ).relativizingPaths(to: "/repo/")
        #expect(report.files == ["policies/a.yaml", "b.yaml", "/elsewhere/c.yaml"])
        #expect(report.diagnostics.map(\.location.file) == ["policies/a.yaml", "/repository/x.yaml"])
    }
}
