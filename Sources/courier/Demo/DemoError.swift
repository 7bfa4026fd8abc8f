/// Why `courier demo` could not run its scenarios at all (exit status 2). A scenario that ran but misbehaved
/// is not an error: it is a failed check, reported by name with exit status 1.
enum DemoError: Error, Sendable, CustomStringConvertible {
    /// The policy file could not be read or compiled; the text holds its diagnostics.
    case policy(String)
    /// The policy compiled but does not route the demo's hosts the way the scenarios need.
    case policyShape(String)
    /// The upstream server could not start.
    case upstream(String)

    var description: String {
        switch self {
        case .policy(let text): return text
        case .policyShape(let text): return "the policy does not fit the demo: \(text)"
        case .upstream(let text): return "the demo upstream could not start: \(text)"
        }
    }
}
