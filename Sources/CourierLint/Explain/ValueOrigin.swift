package import CourierCore

/// Where an effective value of a route came from: a line in a policy file, or Courier's built-in default.
package enum ValueOrigin: Hashable, Sendable, CustomStringConvertible, Encodable {
    /// Set at this place in a policy file (in a service, or in `defaults:`).
    case file(SourceLocation)
    /// Not set anywhere: the built-in default applies (or, for optional features such as caching, the feature
    /// is off).
    case builtInDefault

    /// `FILE:LINE`, or `built-in default`.
    package var description: String {
        switch self {
        case .file(let location): return "\(location.file):\(location.line)"
        case .builtInDefault: return "built-in default"
        }
    }

    /// Encodes as the ``description`` string.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
