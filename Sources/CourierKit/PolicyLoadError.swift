public import CourierCore

/// A policy file could not be turned into a graph for a ``DataLoaderService``: it has errors (the diagnostics
/// say which and where).
public struct PolicyLoadError: Error, Sendable, CustomStringConvertible {
    /// The file given.
    public var path: String
    /// Every diagnostic the compiler produced (at least one is an error).
    public var diagnostics: [Diagnostic]

    /// The error for the policy file at `path` and its compiler diagnostics.
    public init(path: String, diagnostics: [Diagnostic]) {
        self.path = path
        self.diagnostics = diagnostics
    }

    /// The path, then one line per diagnostic.
    public var description: String {
        let errors = diagnostics.filter { $0.severity == .error }
        var s = "the policy \(path) has \(errors.count) error\(errors.count == 1 ? "" : "s")"
        if let first = errors.first { s += "; first: \(first)" }
        return s
    }
}
