extension StringProtocol {
    /// The text without leading and trailing spaces and horizontal tabs (RFC 9110's optional whitespace, OWS).
    package var trimmingHTTPWhitespace: SubSequence {
        var start = startIndex
        var end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start {
            let before = index(before: end)
            guard self[before] == " " || self[before] == "\t" else { break }
            end = before
        }
        return self[start..<end]
    }
}
