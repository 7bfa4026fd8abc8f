package import CourierCore

/// The outcome of linting a set of policy files: which files were read and every diagnostic, each once.
package struct LintReport: Hashable, Sendable {
    /// Every file read: the roots that were linted and the files they include, each once, in the order first
    /// reached.
    package private(set) var files: [String]
    /// Every diagnostic once, sorted by file, line, column, rule and message.
    package private(set) var diagnostics: [Diagnostic]

    /// Builds a report; duplicate files and diagnostics are dropped (an included file linted on its own and
    /// again through the file that includes it reports its problems twice).
    package init(files: [String], diagnostics: [Diagnostic]) {
        var seenFiles = Set<String>()
        self.files = files.filter { seenFiles.insert($0).inserted }
        var seen = Set<Diagnostic>()
        self.diagnostics = diagnostics.filter { seen.insert($0).inserted }.sorted(by: LintReport.precedes)
    }

    /// How many diagnostics are errors.
    package var errorCount: Int { diagnostics.count { $0.severity == .error } }
    /// How many diagnostics are warnings.
    package var warningCount: Int { diagnostics.count { $0.severity == .warning } }

    /// 0 when there are no errors (and, under `strict`, no warnings either), else 1.
    package func exitStatus(strict: Bool) -> LintExitStatus {
        if errorCount > 0 { return .failure }
        if strict && warningCount > 0 { return .failure }
        return .success
    }

    /// A one-line summary for people: `3 files: 1 error, 2 warnings`.
    package var summary: String {
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        return "\(plural(files.count, "file")): \(plural(errorCount, "error")), \(plural(warningCount, "warning"))"
    }

    /// The same report with every path under `directory` made relative to it (forward slashes, no `./`);
    /// paths outside it stay as they are. SARIF wants repository-relative paths, and golden files must not
    /// depend on where the repository is checked out.
    package func relativizingPaths(to directory: String) -> LintReport {
        var copy = self
        copy.files = files.map { PathRelativizer.relative($0, to: directory) }
        copy.diagnostics = diagnostics.map {
            var d = $0
            d.location.file = PathRelativizer.relative(d.location.file, to: directory)
            return d
        }
        return copy
    }

    static func precedes(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        if a.location != b.location { return a.location < b.location }
        if a.severity != b.severity { return a.severity > b.severity }
        if a.rule != b.rule { return a.rule < b.rule }
        if a.message != b.message { return a.message < b.message }
        return (a.suggestion ?? "") < (b.suggestion ?? "")
    }
}
