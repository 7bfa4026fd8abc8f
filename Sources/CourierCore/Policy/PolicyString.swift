/// A string from a policy file that may embed secret references: `"Bearer ${env:TOKEN}"`.
///
/// Its `description` keeps the references as written, so printing a graph never leaks a secret.
public struct PolicyString: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public enum Segment: Hashable, Sendable {
        case literal(String)
        case secret(SecretReference)
    }

    public var segments: [Segment]

    public init(segments: [Segment]) { self.segments = segments }
    public init(stringLiteral value: String) { self.segments = [.literal(value)] }
    public init(literal value: String) { self.segments = [.literal(value)] }

    /// The secret references this string embeds.
    public var references: [SecretReference] {
        segments.compactMap { if case .secret(let r) = $0 { return r } else { return nil } }
    }

    /// Whether the string is entirely literal (no reference).
    public var isLiteral: Bool { references.isEmpty }

    /// The literal text when the string has no references.
    public var literalValue: String? {
        guard isLiteral else { return nil }
        return segments.map { if case .literal(let s) = $0 { return s } else { return "" } }.joined()
    }

    /// Substitutes every reference with what `lookup` returns for it.
    public func resolve<E: Error>(_ lookup: (SecretReference) throws(E) -> String) throws(E) -> String {
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let s): out += s
            case .secret(let r): out += try lookup(r)
            }
        }
        return out
    }

    public var description: String {
        segments.map {
            switch $0 {
            case .literal(let s): return s
            case .secret(let r): return r.description
            }
        }.joined()
    }
}
