import CourierCore
import CourierLint

/// A fixed report that exercises every formatter feature: errors and warnings, suggestions present and
/// absent, a file-level diagnostic at line 0, a path with a space, an absolute path under the base directory,
/// a rule the SARIF rule list does not know, and a duplicate that the report must drop.
enum SampleReport {
    static let base = "/work/repo"

    static let rules = [
        SARIFFormatter.Rule(id: "unknown-key", severity: .error, summary: "A key the language does not define."),
        SARIFFormatter.Rule(id: "single-pin", severity: .warning, summary: "A TLS pin set with no backup pin."),
        SARIFFormatter.Rule(id: "missing-include", severity: .error, summary: "An include that does not exist."),
    ]

    static var report: LintReport {
        let unknownKey = Diagnostic(
            .error, rule: "unknown-key", message: "unknown key 'retires'", suggestion: "did you mean 'retry'?",
            at: SourceLocation(file: "policies/app.yaml", line: 12, column: 5)
        )
        return LintReport(
            files: ["policies/app.yaml", "policies/common.yaml", "policies/my policy.yaml", "\(base)/extra/b.yml"],
            diagnostics: [
                Diagnostic(
                    .warning, rule: "single-pin", message: "service 'web-api' has one pin and no backup pin",
                    at: SourceLocation(file: "policies/my policy.yaml", line: 3, column: 9)
                ),
                unknownKey,
                Diagnostic(
                    .error, rule: "missing-include", message: "included file 'gone.yaml' does not exist",
                    at: SourceLocation(file: "\(base)/extra/b.yml", line: 0, column: 0)
                ),
                Diagnostic(
                    .error, rule: "yaml-syntax", message: "could not find expected ':' \"quoted\" \\ tab\t\nwhile scanning a simple key",
                    at: SourceLocation(file: "policies/common.yaml", line: 7, column: 1)
                ),
                unknownKey,
            ]
        )
    }
}
