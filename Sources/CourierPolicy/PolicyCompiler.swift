public import CourierCore

/// Compiles policy files into an immutable ``PolicyGraph``.
///
/// Pipeline: read (size limit, UTF-8) → compose YAML (depth and node limits, duplicate keys) → parse every key
/// and value against the language tables → resolve `include:` (cycles, missing files) → merge defaults and
/// services key by key, recording where each value came from → check the policy as a whole → build the graph.
/// Every diagnostic of every file is collected; the graph exists only when none is an error.
///
/// A compiler is a value and holds no state between compilations; compile from any thread.
public struct PolicyCompiler: Sendable {
    /// The authoriser plugin types policies may name.
    public let registry: AuthoriserRegistry
    /// Bounds on file size, nesting, nodes and includes.
    public let limits: PolicyLimits

    /// - Parameters:
    ///   - registry: The authoriser plugin types policies may name (`plugin:`); their settings are checked.
    ///   - limits: Bounds on file size, nesting, nodes and includes.
    public init(registry: AuthoriserRegistry = .builtIn, limits: PolicyLimits = .default) {
        self.registry = registry
        self.limits = limits
    }

    /// Reads and compiles a root policy file and everything it includes.
    public func compile(file path: String) -> PolicyCompilation {
        var session = CompilationSession(registry: registry, limits: limits)
        session.run(rootPath: path, source: nil)
        return session.result()
    }

    /// Compiles text as if it were the file at `path` (includes are read from disk relative to `path`).
    public func compile(source: String, path: String) -> PolicyCompilation {
        var session = CompilationSession(registry: registry, limits: limits)
        session.run(rootPath: path, source: Array(source.utf8))
        return session.result()
    }
}
