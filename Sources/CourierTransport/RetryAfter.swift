import CourierCore

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of the three forms
/// RFC 9110 §5.6.7 requires recipients to accept (IMF-fixdate, obsolete RFC 850 and asctime).
public enum RetryAfter {
    /// The delay a `Retry-After` value asks for, measured from `now` (seconds since the Unix epoch, UTC, as the
    /// caller's wall clock reads it). A date in the past gives zero. Nil for anything malformed.
    public static func delay(_ value: String, now: Double) -> Duration? {
        let v = value.trimmingHTTPWhitespace
        if !v.isEmpty, v.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // delay-seconds; clamp absurd values instead of overflowing.
            guard v.count <= 12, let seconds = Int64(v) else { return .seconds(Int64(999_999_999_999)) }
            return .seconds(seconds)
        }
        guard let date = httpDate(v) else { return nil }
        return .seconds(max(0, date - now))
    }

    /// Seconds since the Unix epoch for an HTTP-date, or nil.
    public static func httpDate(_ text: Substring) -> Double? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        var day: Int?, month: Int?, year: Int?, time: Substring?
        if parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard weekdays.contains(String(parts[0].dropLast())) else { return nil }
            day = Int(parts[1]); month = monthIndex(parts[2]); year = Int(parts[3]); time = parts[4]
            guard parts[1].count == 2, parts[3].count == 4 else { return nil }
        } else if parts.count == 4, parts[0].hasSuffix(","), parts[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            guard longWeekdays.contains(String(parts[0].dropLast())) else { return nil }
            let dmy = parts[1].split(separator: "-")
            guard dmy.count == 3, dmy[2].count == 2, let yy = Int(dmy[2]) else { return nil }
            day = Int(dmy[0]); month = monthIndex(dmy[1]); time = parts[2]
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            year = yy < 70 ? 2000 + yy : 1900 + yy
        } else if parts.count == 5, weekdays.contains(String(parts[0])) {
            // asctime: Sun Nov  6 08:49:37 1994
            month = monthIndex(parts[1]); day = Int(parts[2]); time = parts[3]; year = Int(parts[4])
            guard parts[4].count == 4 else { return nil }
        } else {
            return nil
        }
        guard let d = day, let m = month, let y = year, let t = time, (1...31).contains(d) else { return nil }
        let hms = t.split(separator: ":")
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 }), let h = Int(hms[0]), let mi = Int(hms[1]),
            let s = Int(hms[2]), (0...23).contains(h), (0...59).contains(mi), (0...60).contains(s)
        else { return nil }
        let days = daysFromCivil(year: y, month: m, day: d)
        return Double(days * 86_400 + h * 3600 + mi * 60 + s)
    }

    private static let weekdays: Set<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays: Set<String> = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func monthIndex(_ s: Substring) -> Int? { months.firstIndex(of: String(s)).map { $0 + 1 } }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
