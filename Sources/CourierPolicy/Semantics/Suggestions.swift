/// "Did you mean" help: the closest candidate by edit distance, when it is close enough to be a typo.
///
/// The cost is bounded whatever the input: a word longer than ``maxWordLength`` gets no suggestion, and the
/// edit distance fills only the diagonal band within the edit limit (at most 3), so one comparison costs at
/// most `7 × maxWordLength` steps. Without both bounds a 100,000-character name beside one differing in its
/// last letter cost 10^10 steps (30 s in `courier lint`).
enum Suggestions {
    /// Longest word (in Unicode scalars) that gets a suggestion. Names people mistype are far shorter.
    static let maxWordLength = 64

    /// The candidate nearest to `word`, if at most about half of its letters differ (and at most 3).
    static func closest(to word: String, in candidates: [String]) -> String? {
        // utf8.count is constant-time on native strings: a long word is turned away before it is read.
        guard word.utf8.count <= 4 * maxWordLength else { return nil }
        let w = Array(word.lowercased().unicodeScalars)
        guard w.count <= maxWordLength else { return nil }
        let limit = min(3, max(1, (w.count + 1) / 2 - 1))
        var best: (String, Int)?
        for candidate in candidates where candidate.utf8.count <= 4 * (maxWordLength + limit) {
            let c = Array(candidate.lowercased().unicodeScalars)
            let d = distance(w, c, limit: limit)
            if d <= limit, best == nil || d < best!.1 { best = (candidate, d) }
        }
        return best?.0
    }

    /// "did you mean 'retry'?" or nil.
    static func didYouMean(_ word: String, in candidates: [String]) -> String? {
        closest(to: word, in: candidates).map { "did you mean '\($0)'?" }
    }

    /// Damerau-Levenshtein (optimal string alignment) distance, or `limit + 1` for anything beyond `limit`.
    /// Only cells within `limit` of the diagonal are computed (any path through another cell costs more than
    /// `limit`), so the work is `O(a.count × limit)`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        let beyond = limit + 1
        if abs(a.count - b.count) > limit { return beyond }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // Cells outside the band hold `beyond`; each row writes the cell just outside its band on both sides,
        // so the next rows never read a stale value.
        var previous2 = [Int](repeating: beyond, count: b.count + 1)
        var previous = [Int](repeating: beyond, count: b.count + 1)
        var current = [Int](repeating: beyond, count: b.count + 1)
        for j in 0...min(b.count, limit) { previous[j] = j }
        for i in 1...a.count {
            let low = max(1, i - limit), high = min(b.count, i + limit)
            current[low - 1] = low == 1 ? min(i, beyond) : beyond
            if high < b.count { current[high + 1] = beyond }
            var rowMin = beyond
            for j in low...high {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var v = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { v = min(v, previous2[j - 2] + 1) }
                v = min(v, beyond)
                current[j] = v
                rowMin = min(rowMin, v)
            }
            if rowMin > limit { return beyond }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
