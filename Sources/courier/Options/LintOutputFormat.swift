internal import ArgumentParser
internal import CourierLint

/// `courier lint --format`: text, json or sarif; each maps to a ``DiagnosticFormatter``.
enum LintOutputFormat: String, CaseIterable, ExpressibleByArgument {
    case text
    case json
    case sarif

    /// The formatter for this format. SARIF paths are made relative to `workingDirectory`.
    func formatter(workingDirectory: String) -> any DiagnosticFormatter {
        switch self {
        case .text: return TextFormatter()
        case .json: return JSONFormatter()
        case .sarif:
            return SARIFFormatter(
                rules: SARIFFormatter.policyRules, baseDirectory: workingDirectory,
                toolVersion: CourierCommand.configuration.version
            )
        }
    }
}
