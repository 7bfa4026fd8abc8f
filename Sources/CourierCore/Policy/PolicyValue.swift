/// A value in an authoriser's `settings`, typed by the plugin's setting specification.
public indirect enum PolicyValue: Hashable, Sendable, CustomStringConvertible {
    case string(PolicyString)
    case number(Double)
    case bool(Bool)
    case duration(Duration)
    case list([PolicyValue])
    case map([String: PolicyValue])

    /// The string, when this is a string without secret references.
    public var literalString: String? {
        if case .string(let s) = self { return s.literalValue }
        return nil
    }

    public var description: String {
        switch self {
        case .string(let s): return s.description
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
        case .bool(let b): return String(b)
        case .duration(let d): return DurationFormat.format(d)
        case .list(let l): return "[" + l.map(\.description).joined(separator: ", ") + "]"
        case .map(let m):
            return "{" + m.keys.sorted().map { "\($0): \(m[$0]!.description)" }.joined(separator: ", ") + "}"
        }
    }
}
