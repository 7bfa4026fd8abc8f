internal import CourierPolicy

extension SARIFFormatter {
    /// Every rule the policy compiler can report, as SARIF rule descriptors.
    package static var policyRules: [Rule] {
        PolicyRule.all.map { Rule(id: $0.id, severity: $0.severity, summary: $0.summary) }
    }

    /// A SARIF formatter that lists every policy rule.
    package init(baseDirectory: String? = nil, toolVersion: String? = nil) {
        self.init(rules: SARIFFormatter.policyRules, baseDirectory: baseDirectory, toolVersion: toolVersion)
    }
}
