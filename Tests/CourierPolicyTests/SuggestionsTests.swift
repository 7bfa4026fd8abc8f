import CourierTestSupport
@testable import CourierPolicy
import Testing

/// "Did you mean": the banded edit distance agrees with the full table, and long words get no suggestion.
@Suite(.onThreadsOfTheirOwn) struct SuggestionsTests {
    /// The whole optimal-string-alignment table, the definition the banded version must agree with.
    static func fullDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    @Test func bandedDistanceAgreesWithTheFullTable() {
        // Every pair of words up to 6 letters over a 3-letter alphabet would be 10^6 pairs; a fixed-seed sample
        // of random pairs (similar ones included, by mutating one word into the other) covers the band edges.
        var rng = SplitMix64(seed: 12)
        let alphabet: [Unicode.Scalar] = ["a", "b", "c"]
        for _ in 0..<20_000 {
            let a = (0..<Int(rng.next() % 9)).map { _ in alphabet[Int(rng.next() % 3)] }
            var b = a
            for _ in 0..<Int(rng.next() % 5) {
                let at = b.isEmpty ? 0 : Int(rng.next() % UInt64(b.count))
                switch rng.next() % 4 {
                case 0: b.insert(alphabet[Int(rng.next() % 3)], at: min(at, b.count))
                case 1: if !b.isEmpty { b.remove(at: at) }
                case 2: if !b.isEmpty { b[at] = alphabet[Int(rng.next() % 3)] }
                default: if at + 1 < b.count { b.swapAt(at, at + 1) }
                }
            }
            let full = Self.fullDistance(a, b)
            for limit in 1...3 {
                let banded = Suggestions.distance(a, b, limit: limit)
                #expect(banded == (full <= limit ? full : limit + 1), "\(a) \(b) limit \(limit): \(banded) vs \(full)")
            }
        }
    }

    @Test func nearNamesAreSuggestedAndLongOnesAreNot() {
        #expect(Suggestions.closest(to: "retires", in: ["retry", "timeouts"]) == "retry")
        #expect(Suggestions.closest(to: "TOKNE", in: ["token", "other"]) == "token")
        let long = String(repeating: "a", count: Suggestions.maxWordLength)
        #expect(Suggestions.closest(to: long + "b", in: [long + "c"]) == nil, "one past the longest word")
        #expect(Suggestions.closest(to: String(long.dropLast()) + "b", in: [String(long.dropLast()) + "c"]) == String(long.dropLast()) + "c")
    }
}
