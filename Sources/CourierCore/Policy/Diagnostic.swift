/// One finding about a policy file: where, how bad, which rule, what is wrong and how to fix it.
///
/// Diagnostics are values, never thrown: the compiler collects every diagnostic in a file rather than
/// stopping at the first, and `courier lint` formats them as text, JSON or SARIF.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Hashable, Sendable, Comparable, CaseIterable {
        /// The policy cannot be compiled; no graph is produced.
        case error
        /// The policy compiles, but probably does not do what its author meant.
        case warning

        private var rank: Int { self == .error ? 1 : 0 }
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    public var severity: Severity
    /// A stable, kebab-case rule identifier, e.g. `unknown-key`.
    public var rule: String
    /// What is wrong, in one sentence.
    public var message: String
    /// How to fix it, when the compiler can tell (e.g. "did you mean 'retry'?").
    public var suggestion: String?
    /// Where it is.
    public var location: SourceLocation

    package init(
        _ severity: Severity,
        rule: String,
        message: String,
        suggestion: String? = nil,
        at location: SourceLocation
    ) {
        self.severity = severity
        self.rule = rule
        self.message = message
        self.suggestion = suggestion
        self.location = location
    }

    /// `FILE:LINE:COLUMN: error|warning: MESSAGE [rule-id]`, the format of `courier lint --format text`.
    public var description: String {
        "\(location): \(severity.rawValue): \(message) [\(rule)]"
    }
}
