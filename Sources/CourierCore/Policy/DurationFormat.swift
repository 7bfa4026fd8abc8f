/// The policy language's durations (`250ms`, `5s`, `2m`, `1h`, and combinations such as `1m30s`) and sizes
/// (`512KiB`, `10MiB`, `1GiB`, plain bytes `1024` or `1024B`, and SI `KB`/`MB`/`GB`).
package enum DurationFormat {
    /// Parses a duration; nil when malformed, negative or over 100 days.
    package static func parse(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        var rest = text.trimmingHTTPWhitespace
        guard !rest.isEmpty else { return nil }
        var millis: Double = 0
        var lastUnitRank = Int.max
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !digits.isEmpty, digits.filter({ $0 == "." }).count <= 1, !digits.hasPrefix("."),
                !digits.hasSuffix("."), let value = Double(digits)
            else { return nil }
            rest = rest.dropFirst(digits.count)
            let unitText = rest.prefix { $0.isASCII && $0.isLetter }
            guard let index = units.firstIndex(where: { $0.0 == unitText }) else { return nil }
            // Units must go from large to small, each once: "1h30m" yes, "30m1h" and "1s1s" no.
            let rank = index
            guard rank < lastUnitRank else { return nil }
            lastUnitRank = rank
            millis += value * Double(units[index].1)
            rest = rest.dropFirst(unitText.count)
        }
        guard millis.isFinite, millis >= 0, millis <= 100 * 86_400_000 else { return nil }
        return .nanoseconds(Int64((millis * 1_000_000).rounded()))
    }

    /// Formats a duration the way a person writes it: `250ms`, `5s`, `1.5s`, `2m`, `1h30m`.
    package static func format(_ d: Duration) -> String {
        let ms = d.seconds * 1000
        if ms < 1000 {
            return ms == ms.rounded() ? "\(Int(ms))ms" : "\(trim(ms))ms"
        }
        let totalSeconds = ms / 1000
        if totalSeconds < 60 || totalSeconds != totalSeconds.rounded() {
            return "\(trim(totalSeconds))s"
        }
        var s = Int(totalSeconds)
        var out = ""
        if s >= 3600 {
            out += "\(s / 3600)h"
            s %= 3600
        }
        if s >= 60 {
            out += "\(s / 60)m"
            s %= 60
        }
        if s > 0 { out += "\(s)s" }
        return out
    }

    /// Parses a size in bytes; nil when malformed or over 1 PiB.
    package static func parseSize(_ text: String) -> Int64? {
        let t = text.trimmingHTTPWhitespace
        let digits = t.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !digits.isEmpty, let value = Double(digits), digits.filter({ $0 == "." }).count <= 1 else { return nil }
        let unit = t.dropFirst(digits.count)
        let multipliers: [Substring: Double] = [
            "": 1, "B": 1, "KiB": 1024, "MiB": 1_048_576, "GiB": 1_073_741_824, "TiB": 1_099_511_627_776,
            "KB": 1000, "kB": 1000, "MB": 1e6, "GB": 1e9, "TB": 1e12,
        ]
        guard let m = multipliers[unit] else { return nil }
        let bytes = value * m
        guard bytes.isFinite, bytes >= 0, bytes <= 1_125_899_906_842_624, bytes == bytes.rounded() else { return nil }
        return Int64(bytes)
    }

    /// Formats a size with the largest binary unit that divides it exactly (`10MiB`), else in bytes.
    package static func formatSize(_ bytes: Int64) -> String {
        for (unit, m) in [("GiB", Int64(1) << 30), ("MiB", Int64(1) << 20), ("KiB", Int64(1) << 10)]
        where bytes >= m && bytes % m == 0 {
            return "\(bytes / m)\(unit)"
        }
        return "\(bytes)B"
    }

    private static func trim(_ v: Double) -> String {
        let s = String((v * 1000).rounded() / 1000)
        return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
    }
}
