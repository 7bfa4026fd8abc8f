/// Bounds that keep hostile or broken input cheap: every limit turns into one clear error, never a hang or a
/// crash. Documented in docs/policy.md.
public struct PolicyLimits: Sendable, Hashable {
    /// Largest file read, in bytes. Default 8 MiB (a 10,000-service policy is 1-2 MB).
    public var maxFileBytes: Int
    /// Deepest nesting of mappings and sequences. Default 64 (the language itself needs about 6).
    public var maxDepth: Int
    /// Most YAML nodes per file, counted after alias expansion (an alias counts its whole target each time it
    /// is used). Default 2,000,000.
    public var maxNodes: Int
    /// Most files per compilation, the root included. Default 256.
    public var maxIncludes: Int
    /// Most diagnostics reported per file. Beyond it one `too-many-diagnostics` warning says how many more
    /// there were, so that output stays proportional to the input (an alias repeats a line's problem in a
    /// few bytes). Errors are kept before warnings, so a file with errors always shows some. Default 100.
    public var maxDiagnosticsPerFile: Int

    public init(
        maxFileBytes: Int = 8 << 20, maxDepth: Int = 64, maxNodes: Int = 2_000_000, maxIncludes: Int = 256,
        maxDiagnosticsPerFile: Int = 100
    ) {
        self.maxFileBytes = maxFileBytes
        self.maxDepth = maxDepth
        self.maxNodes = maxNodes
        self.maxIncludes = maxIncludes
        self.maxDiagnosticsPerFile = max(1, maxDiagnosticsPerFile)
    }

    /// 8 MiB, depth 64, 2,000,000 nodes, 256 files, 100 diagnostics per file.
    public static let `default` = PolicyLimits()
}
