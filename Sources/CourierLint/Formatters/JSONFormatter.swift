internal import CourierCore
internal import FoundationEssentials

/// `{"diagnostics": [{"column", "file", "line", "message", "rule", "severity", "suggestion"}], "files": N}`,
/// keys sorted, pretty-printed, `suggestion` null when there is none.
package struct JSONFormatter: DiagnosticFormatter {
    /// `--format json`.
    package static let identifier = "json"

    /// The encoded document.
    struct Document: Codable, Hashable {
        var files: Int
        var diagnostics: [Entry]
    }

    /// One diagnostic.
    struct Entry: Codable, Hashable {
        var file: String
        var line: Int
        var column: Int
        var severity: String
        var rule: String
        var message: String
        var suggestion: String?

        enum CodingKeys: String, CodingKey { case file, line, column, severity, rule, message, suggestion }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(file, forKey: .file)
            try c.encode(line, forKey: .line)
            try c.encode(column, forKey: .column)
            try c.encode(severity, forKey: .severity)
            try c.encode(rule, forKey: .rule)
            try c.encode(message, forKey: .message)
            // Always present, so consumers need not tell "absent" from "null".
            try c.encode(suggestion, forKey: .suggestion)
        }
    }

    /// The JSON formatter.
    package init() {}

    /// The JSON document for `report`, ending with a newline.
    package func format(_ report: LintReport) -> String {
        let document = Document(
            files: report.files.count,
            diagnostics: report.diagnostics.map {
                Entry(
                    file: $0.location.file, line: $0.location.line, column: $0.location.column,
                    severity: $0.severity.rawValue, rule: $0.rule, message: $0.message, suggestion: $0.suggestion
                )
            }
        )
        return JSONOutput.encode(document)
    }
}
