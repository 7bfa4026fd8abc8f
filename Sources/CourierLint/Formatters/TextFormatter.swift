package import CourierCore

/// `FILE:LINE:COLUMN: error|warning: MESSAGE [rule-id]`, one line per diagnostic, the shape compilers and
/// editors understand. A suggestion follows on its own line, indented by four spaces: `    suggestion: …`.
/// A clean report prints nothing. Line breaks inside a message or suggestion are printed as spaces, so every
/// diagnostic stays one line for tools that read this format.
package struct TextFormatter: DiagnosticFormatter {
    /// `--format text`, the default.
    package static let identifier = "text"

    /// The text formatter.
    package init() {}

    /// One line per diagnostic (plus a suggestion line), or nothing for a clean report.
    package func format(_ report: LintReport) -> String {
        var out = ""
        for diagnostic in report.diagnostics {
            out += Self.line(for: diagnostic) + "\n"
            if let suggestion = diagnostic.suggestion {
                out += "    suggestion: \(Self.oneLine(suggestion))\n"
            }
        }
        return out
    }

    /// The first (contract) line for one diagnostic.
    package static func line(for diagnostic: Diagnostic) -> String {
        let l = diagnostic.location
        return "\(l.file):\(l.line):\(l.column): \(diagnostic.severity.rawValue): \(oneLine(diagnostic.message)) [\(diagnostic.rule)]"
    }

    static func oneLine(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
