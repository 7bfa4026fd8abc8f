import CourierCore
import CourierLint
import Foundation
import Testing

@Suite struct FormatterGoldenTests {
    @Test func textMatchesGolden() throws {
        try GoldenFile.check(TextFormatter().format(SampleReport.report), named: "sample.text")
    }

    @Test func jsonMatchesGolden() throws {
        try GoldenFile.check(JSONFormatter().format(SampleReport.report), named: "sample.json")
    }

    @Test func sarifMatchesGolden() throws {
        let formatter = SARIFFormatter(rules: SampleReport.rules, baseDirectory: SampleReport.base, toolVersion: "0.1.0")
        try GoldenFile.check(formatter.format(SampleReport.report), named: "sample.sarif")
    }

    @Test func textFirstLineIsTheContractShape() {
        let d = Diagnostic(
            .warning, rule: "single-pin", message: "one pin", suggestion: "add a backup pin",
            at: CourierCore.SourceLocation(file: "a.yaml", line: 2, column: 3)
        )
        let lines = TextFormatter().format(LintReport(files: ["a.yaml"], diagnostics: [d])).split(separator: "\n")
        #expect(lines == ["a.yaml:2:3: warning: one pin [single-pin]", "    suggestion: add a backup pin"])
    }

    @Test func cleanReportPrintsNothingInTextAndAnEmptyListInJSON() throws {
        let report = LintReport(files: ["a.yaml"], diagnostics: [])
        #expect(TextFormatter().format(report) == "")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(JSONFormatter().format(report).utf8)) as? [String: Any]
        )
        #expect(json["files"] as? Int == 1)
        #expect((json["diagnostics"] as? [Any])?.isEmpty == true)
    }

    @Test func identifiersAreTheFormatNames() {
        #expect(TextFormatter.identifier == "text")
        #expect(JSONFormatter.identifier == "json")
        #expect(SARIFFormatter.identifier == "sarif")
    }
}
