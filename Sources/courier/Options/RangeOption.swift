internal import ArgumentParser
internal import CourierCore

/// `courier fetch -r/--range`, curl's: byte ranges sent as `Range: bytes=…` for http(s) and `file:` URLs. The list
/// is sent as given (`0-499`, `500-`, `-500`, `0-0,-1`); a `206 Partial Content` is the answer, written like any
/// other (no error), and a server that ignores the field answers `200` with the whole body.
struct RangeOption: ParsableArguments {
    @Option(
        // Unconditional: `-r -500` (the last 500 bytes) is a value, not an option.
        name: [.customShort("r"), .customLong("range")], parsing: .unconditional,
        help: ArgumentHelp(
            "Ask for these bytes only, as curl's -r: FIRST-LAST, FIRST- (to the end), -COUNT (the last COUNT), or a comma list, sent as Range: bytes=RANGE. A 206 is written as the answer.",
            valueName: "range"
        )
    )
    var range: String?

    func validate() throws {
        guard let range else { return }
        guard Self.isValid(range) else {
            throw ValidationError("-r takes FIRST-LAST, FIRST-, -COUNT or a comma list of them (0-499, 500-, -500), not '\(range)'")
        }
    }

    /// The `Range` field's value, if `-r` was given.
    var fieldValue: String? { range.map { "bytes=\($0)" } }

    /// Whether every comma-separated item is `digits-digits`, `digits-` or `-digits` (first ≤ last).
    static func isValid(_ text: String) -> Bool {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        return !items.isEmpty && items.allSatisfy { item in
            let halves = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard halves.count == 2 else { return false }
            let (first, last) = (halves[0], halves[1])
            func digits(_ s: Substring) -> Bool { !s.isEmpty && s.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
            if first.isEmpty { return digits(last) }
            guard digits(first) else { return false }
            if last.isEmpty { return true }
            guard digits(last) else { return false }
            guard let a = UInt64(first), let b = UInt64(last) else { return true }  // too long to compare: sent as is
            return a <= b
        }
    }
}
