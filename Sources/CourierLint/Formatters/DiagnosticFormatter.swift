/// Turns a lint report into the bytes `courier lint --format ID` prints. One conforming type per format, each
/// named by its ``identifier`` (as SwiftLint's reporters are).
package protocol DiagnosticFormatter: Sendable {
    /// The `--format` value that selects this formatter: `text`, `json`, `sarif`.
    static var identifier: String { get }
    /// The whole output for `report`, ending with a newline unless it is empty.
    func format(_ report: LintReport) -> String
}
