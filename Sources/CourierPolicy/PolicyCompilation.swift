public import CourierCore

/// The result of compiling a policy: the graph when there is no error, and the diagnostics of every file read.
public struct PolicyCompilation: Sendable {
    /// The compiled graph; nil when any diagnostic is an error.
    public package(set) var graph: PolicyGraph?
    /// Every diagnostic of every file read, sorted by file, line and column; at most
    /// ``PolicyLimits/maxDiagnosticsPerFile`` per file, and then one `too-many-diagnostics` warning counting the
    /// rest.
    public package(set) var diagnostics: [Diagnostic]
    /// The root file and every included file read, root first, as paths relative to where the root was given.
    public package(set) var files: [String]

    package init(graph: PolicyGraph?, diagnostics: [Diagnostic], files: [String]) {
        self.graph = graph
        self.diagnostics = diagnostics
        self.files = files
    }

    /// Whether any diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}
