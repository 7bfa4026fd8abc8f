/// A reference to a secret held outside the policy: `${env:NAME}` or `${file:path}`.
///
/// The graph stores references, never values; they are resolved when a loader starts (see
/// ``PolicyString/resolve(_:)``), and every printed form of the graph shows the reference only.
public struct SecretReference: Hashable, Sendable, CustomStringConvertible {
    public enum Source: String, Hashable, Sendable {
        /// An environment variable.
        case env
        /// A file's contents with one trailing newline removed; relative paths are relative to the policy file
        /// (the compiler stores the absolute path).
        case file
    }

    public var source: Source
    /// The variable name or file path.
    public var name: String

    public init(source: Source, name: String) {
        self.source = source
        self.name = name
    }

    public var description: String { "${\(source.rawValue):\(name)}" }
}
