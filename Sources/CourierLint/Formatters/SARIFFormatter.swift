package import CourierCore

/// SARIF 2.1.0, the format GitHub code scanning ingests (`github/codeql-action/upload-sarif`).
///
/// One run whose `tool.driver.rules` lists every rule the compiler knows (plus any rule a diagnostic names
/// that is not in that list), and one result per diagnostic with `ruleId`, `ruleIndex`, `level`,
/// `message.text` and a physical location: the file's path relative to ``baseDirectory`` with forward
/// slashes, and a 1-based `region.startLine` / `startColumn` (a position of 0 is reported as 1, since SARIF
/// lines and columns start at 1).
package struct SARIFFormatter: DiagnosticFormatter {
    /// `--format sarif`.
    package static let identifier = "sarif"

    /// The SARIF schema the output declares.
    package static let schemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
    /// Where the tool's documentation lives (SARIF `tool.driver.informationUri`).
    package static let informationURI = "https://github.com/courier-http/courier/blob/main/docs/lint.md"

    /// What SARIF says about one rule.
    package struct Rule: Hashable, Sendable {
        /// The rule id diagnostics carry (`unknown-key`).
        package var id: String
        /// The default level.
        package var severity: Diagnostic.Severity
        /// One sentence about what the rule catches.
        package var summary: String
        /// A rule descriptor.
        package init(id: String, severity: Diagnostic.Severity, summary: String) {
            self.id = id
            self.severity = severity
            self.summary = summary
        }
    }

    /// The rules listed in `tool.driver.rules`, in this order.
    package var rules: [Rule]
    /// Absolute paths below this directory are written relative to it; nil leaves paths as they are.
    package var baseDirectory: String?
    /// `tool.driver.version`, when known.
    package var toolVersion: String?

    /// A formatter listing `rules`; see ``init(baseDirectory:toolVersion:)`` for the compiler's catalogue.
    package init(rules: [Rule], baseDirectory: String? = nil, toolVersion: String? = nil) {
        self.rules = rules
        self.baseDirectory = baseDirectory
        self.toolVersion = toolVersion
    }

    /// The SARIF log for `report`, ending with a newline.
    package func format(_ report: LintReport) -> String {
        let report = baseDirectory.map { report.relativizingPaths(to: $0) } ?? report
        var descriptors = rules.map(SARIFLog.ReportingDescriptor.init)
        var index: [String: Int] = [:]
        for (i, rule) in rules.enumerated() where index[rule.id] == nil { index[rule.id] = i }
        for diagnostic in report.diagnostics where index[diagnostic.rule] == nil {
            index[diagnostic.rule] = descriptors.count
            descriptors.append(
                SARIFLog.ReportingDescriptor(
                    Rule(id: diagnostic.rule, severity: diagnostic.severity, summary: diagnostic.rule)
                )
            )
        }
        let results = report.diagnostics.map { diagnostic in
            SARIFLog.Result(
                ruleId: diagnostic.rule,
                ruleIndex: index[diagnostic.rule]!,
                level: diagnostic.severity.rawValue,
                message: .init(text: diagnostic.suggestion.map { "\(diagnostic.message); \($0)" } ?? diagnostic.message),
                locations: [
                    .init(
                        physicalLocation: .init(
                            artifactLocation: .init(uri: Self.uri(forPath: diagnostic.location.file)),
                            region: .init(
                                startLine: max(1, diagnostic.location.line),
                                startColumn: max(1, diagnostic.location.column)
                            )
                        )
                    )
                ]
            )
        }
        let log = SARIFLog(
            schema: Self.schemaURI,
            version: "2.1.0",
            runs: [
                .init(
                    tool: .init(
                        driver: .init(
                            name: "courier", informationUri: Self.informationURI, version: toolVersion,
                            rules: descriptors
                        )
                    ),
                    columnKind: "unicodeCodePoints",
                    results: results
                )
            ]
        )
        return JSONOutput.encode(log)
    }

    /// A relative URI reference for a path: forward slashes, no `./`, and the characters that would end or
    /// break a URI path (space, `%`, `#`, `?`, controls, non-ASCII) percent-encoded.
    package static func uri(forPath path: String) -> String {
        var cleaned = PathRelativizer.clean(path.replacing("\\", with: "/"))
        if cleaned == "." { cleaned = "" }
        var out = ""
        for byte in cleaned.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"),
                UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        if cleaned.hasPrefix("/") { return "file://" + out }
        return out
    }
}
