/// Small text helpers for diagnostic messages.
extension String {
    var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }

    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }

    /// At most 60 characters, for quoting user text in messages.
    var abbreviated: String { count > 60 ? String(prefix(57)) + "..." : self }

    var withoutFinalPeriod: String { hasSuffix(".") ? String(dropLast()) : self }
}
