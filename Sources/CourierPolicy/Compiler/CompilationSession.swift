internal import CourierCore

/// The state of one compilation: files read so far, the include stack, and every diagnostic.
struct CompilationSession {
    let registry: AuthoriserRegistry
    let limits: PolicyLimits
    private(set) var diagnostics: [Diagnostic] = []
    /// Files read, root first, in reading order.
    private(set) var files: [String] = []
    /// Parsed files in merge order: includes before the file that includes them (depth first).
    private var parsed: [ParsedPolicyFile] = []
    /// Canonical paths of files already read.
    private var visited: Set<String> = []
    /// Canonical paths of files being read (the include chain), to find cycles.
    private var stack: [String] = []
    private var graph: PolicyGraph?

    init(registry: AuthoriserRegistry, limits: PolicyLimits) {
        self.registry = registry
        self.limits = limits
    }

    mutating func run(rootPath: String, source: [UInt8]?) {
        let canonical = PolicyFileSystem.canonicalPath(rootPath) ?? PolicyFileSystem.absolute(rootPath)
        load(path: rootPath, canonical: canonical, source: source, includedAt: nil)
        guard !parsed.isEmpty else { return }
        var linker = PolicyLinker(files: parsed, registry: registry)
        let graph = linker.link(fileList: files)
        diagnostics += linker.diagnostics
        if !diagnostics.contains(where: { $0.severity == .error }) { self.graph = graph }
    }

    func result() -> PolicyCompilation {
        // An aliased node is checked wherever it is used; say each thing once.
        var seen: Set<Diagnostic> = []
        let unique = diagnostics.filter { seen.insert($0).inserted }
        return PolicyCompilation(graph: graph, diagnostics: Self.capped(unique, perFile: limits.maxDiagnosticsPerFile), files: files)
    }

    /// The diagnostics sorted, with at most `limit` per file: a file with more keeps its errors before its
    /// warnings, then the earliest, and gets one `too-many-diagnostics` warning, just after its last
    /// diagnostic's position, counting the rest. Errors come first so that a file with errors still shows errors (the
    /// warning is never the only sign of them). The one place the cap is applied.
    static func capped(_ diagnostics: [Diagnostic], perFile limit: Int) -> [Diagnostic] {
        var byFile: [String: [Diagnostic]] = [:]
        for d in diagnostics { byFile[d.location.file, default: []].append(d) }
        let limit = max(0, limit)
        guard byFile.values.contains(where: { $0.count > limit }) else { return diagnostics.sorted(by: order) }
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        var kept: [Diagnostic] = []
        for list in byFile.values {
            guard list.count > limit else {
                kept += list
                continue
            }
            let ranked = list.sorted { $0.severity != $1.severity ? $0.severity > $1.severity : order($0, $1) }
            let omitted = ranked[limit...]
            let errors = omitted.count { $0.severity == .error }
            // Just after the file's last diagnostic, so that it is printed last.
            var after = list.lazy.map(\.location).max()!
            after.column += 1
            kept += ranked[..<limit]
            kept.append(Diagnostic(
                PolicyRule.tooManyDiagnostics.severity, rule: PolicyRule.tooManyDiagnostics.id,
                message: "\(plural(omitted.count, "more diagnostic")) in this file \(omitted.count == 1 ? "is" : "are") not shown: "
                    + "\(plural(errors, "error")), \(plural(omitted.count - errors, "warning"))",
                suggestion: "fix the diagnostics shown and lint again", at: after))
        }
        return kept.sorted(by: order)
    }

    static func order(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        if a.location != b.location { return a.location < b.location }
        if a.rule != b.rule { return a.rule < b.rule }
        return a.message < b.message
    }

    private mutating func report(_ rule: PolicyRule, _ message: String, at location: SourceLocation, suggestion: String? = nil) {
        diagnostics.append(Diagnostic(rule.severity, rule: rule.id, message: message, suggestion: suggestion, at: location))
    }

    /// Reads, parses and recursively includes one file.
    private mutating func load(path: String, canonical: String, source: [UInt8]?, includedAt: SourceLocation?) {
        visited.insert(canonical)
        files.append(path)
        let start = SourceLocation(file: path, line: 1, column: 1)
        let bytes: [UInt8]
        if let source {
            bytes = source
            if bytes.count > limits.maxFileBytes {
                report(.fileTooLarge, "the policy is \(bytes.count) bytes, over the \(limits.maxFileBytes)-byte limit", at: start)
                return
            }
        } else {
            switch PolicyFileSystem.read(path, maxBytes: limits.maxFileBytes) {
            case .success(let b): bytes = b
            case .failure(let error):
                if case .tooLarge = error.reason {
                    report(.fileTooLarge, error.description, at: includedAt ?? start, suggestion: "split the policy into files and use 'include', or raise PolicyLimits.maxFileBytes")
                } else {
                    report(.fileUnreadable, error.description, at: includedAt ?? start)
                }
                return
            }
        }
        if let (line, column) = UTF8Check.firstInvalid(bytes) {
            report(.invalidEncoding, "the file is not UTF-8 text (invalid byte sequence); is it binary or in another encoding?", at: SourceLocation(file: path, line: line, column: column),
                   suggestion: "save policy files as UTF-8")
            return
        }
        var duplicates: [(key: String, line: Int, column: Int)] = []
        // A UTF-8 byte order mark is allowed (and not a column); libyaml refuses it once the encoding is fixed.
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        let composed = YAMLComposer(limits: limits).compose(text, duplicates: &duplicates)
        for d in duplicates {
            report(.duplicateKey, "duplicate key '\(d.key.abbreviated)'; a mapping may have each key once (this one would silently replace the first)",
                   at: SourceLocation(file: path, line: d.line, column: d.column), suggestion: "remove or merge one of the two")
        }
        let tree: YAMLTree
        switch composed {
        case .success(let t): tree = t
        case .failure(let f):
            report(f.rule, f.message, at: SourceLocation(file: path, line: f.line, column: f.column), suggestion: f.suggestion)
            return
        }
        var parser = PolicyFileParser(path: path, tree: tree, registry: registry)
        let file = parser.parse()
        diagnostics += parser.diagnostics

        stack.append(canonical)
        for include in file.includes {
            guard let target = PolicyFileSystem.canonicalPath(include.path) else {
                report(.includeMissing, "included file '\(include.path.abbreviated)' does not exist", at: include.location,
                       suggestion: "include paths are relative to the file that includes them")
                continue
            }
            guard SystemCall.isRegularFile(target) else {
                report(.includeMissing, "included path '\(include.path.abbreviated)' is not a regular file", at: include.location,
                       suggestion: "include names policy files, not directories")
                continue
            }
            if stack.contains(target) {
                let chain = (stack.drop { $0 != target } + [target]).map(Self.shortName).joined(separator: " → ")
                report(.includeCycle, "including '\(include.path.abbreviated)' makes a cycle: \(chain)", at: include.location,
                       suggestion: "move what both files need into a third file that both include")
                continue
            }
            if visited.contains(target) { continue }  // a diamond: read once, merged once
            if files.count >= limits.maxIncludes {
                report(.tooManyIncludes, "the policy reads more than \(limits.maxIncludes) files", at: include.location)
                continue
            }
            load(path: include.path, canonical: target, source: nil, includedAt: include.location)
        }
        stack.removeLast()
        parsed.append(file)
    }

    private static func shortName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
