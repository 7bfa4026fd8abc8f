/// Small text helpers for diagnostic messages.
extension String {
    var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }

    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }

    var withoutFinalPeriod: String { hasSuffix(".") ? String(dropLast()) : self }
}

extension StringProtocol {
    /// At most 60 characters, for quoting user text in messages.
    ///
    /// Every message quotes user text this way: an alias repeats a long scalar in a few bytes of YAML, so a
    /// message quoting it whole would make the output (and the memory holding it) many times the input.
    /// Costs at most 60 steps whatever the length of the text.
    var abbreviated: String { abbreviated(to: 60) }

    /// At most `limit` characters: the first `limit - 3` and "..." when the text is longer.
    func abbreviated(to limit: Int) -> String {
        guard let end = index(startIndex, offsetBy: limit, limitedBy: endIndex), end != endIndex else { return String(self) }
        return String(self[..<index(startIndex, offsetBy: limit - 3)]) + "..."
    }
}
