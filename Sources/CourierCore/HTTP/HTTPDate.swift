/// HTTP-dates (RFC 9110 §5.6.7) as seconds since the Unix epoch, UTC, without Foundation.
///
/// ``format(_:)`` writes the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); ``parse(_:)`` accepts the
/// three forms recipients must accept: IMF-fixdate, the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`)
/// and asctime (`Sun Nov  6 08:49:37 1994`). Shared by `Retry-After`, HMAC signing's `Date` and HTTP caching.
package enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let weekdays: Set<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays: Set<String> = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since 1970 (fractions dropped) as an IMF-fixdate. Years 0-999 are written with four digits, as
    /// IMF-fixdate's `year = 4DIGIT` requires (`parse` reads no other width); years outside 0-9999 have no
    /// IMF-fixdate and are written as they are.
    package static func format(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.down))
        let day = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - day * 86_400
        let (year, month, dayOfMonth) = civil(fromDays: day)
        let weekday = days[((day % 7) + 7) % 7]
        return "\(weekday), \(pad(dayOfMonth)) \(months[month - 1]) \(fourDigits(year)) "
            + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
    }

    /// Seconds since the Unix epoch for an HTTP-date in any of the three forms (surrounding whitespace
    /// allowed), or nil for anything else: `0`, `-1`, a bad weekday or month name, a time out of range.
    /// An RFC 850 two-digit year below 70 is taken as 20yy, else 19yy.
    package static func parse(_ text: some StringProtocol) -> Double? {
        // The form servers send (RFC 9110: "MUST generate" it), byte by byte; the general parse below handles
        // the obsolete forms, surrounding whitespace, and refuses everything else the same way.
        if let fixed = Array(text.utf8).withUnsafeBufferPointer(parseIMFFixdate) { return fixed }
        let parts = Substring(text).trimmingHTTPWhitespace.split(separator: " ", omittingEmptySubsequences: true)
        var day: Int?, month: Int?, year: Int?, time: Substring?
        if parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard weekdays.contains(String(parts[0].dropLast())) else { return nil }
            day = decimal(parts[1]); month = monthIndex(parts[2]); year = decimal(parts[3]); time = Substring(parts[4])
            guard parts[1].count == 2, parts[3].count == 4 else { return nil }
        } else if parts.count == 4, parts[0].hasSuffix(","), parts[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            guard longWeekdays.contains(String(parts[0].dropLast())) else { return nil }
            let dmy = parts[1].split(separator: "-")
            guard dmy.count == 3, dmy[2].count == 2, let yy = decimal(dmy[2]) else { return nil }
            day = decimal(dmy[0]); month = monthIndex(dmy[1]); time = Substring(parts[2])
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            year = yy < 70 ? 2000 + yy : 1900 + yy
        } else if parts.count == 5, weekdays.contains(String(parts[0])) {
            // asctime: Sun Nov  6 08:49:37 1994
            month = monthIndex(parts[1]); day = decimal(parts[2]); time = Substring(parts[3]); year = decimal(parts[4])
            guard parts[4].count == 4 else { return nil }
        } else {
            return nil
        }
        guard let d = day, let m = month, let y = year, let t = time, (1...31).contains(d) else { return nil }
        let hms = t.split(separator: ":")
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 }), let h = decimal(hms[0]), let mi = decimal(hms[1]),
            let s = decimal(hms[2]), (0...23).contains(h), (0...59).contains(mi), (0...60).contains(s)
        else { return nil }
        let days = daysFromCivil(year: y, month: m, day: d)
        return Double(days * 86_400 + h * 3600 + mi * 60 + s)
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// The value of `text` when it is one or more ASCII digits (the grammar's `DIGIT`s), else nil: `Int(_:)` would
    /// also take a sign, so that `-024` was a year.
    private static func decimal(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    private static func fourDigits(_ year: Int) -> String {
        let digits = String(year)
        return (0...999).contains(year) ? String(repeating: "0", count: 4 - digits.count) + digits : digits
    }

    private static let weekdayBytes = weekdays.map { Array($0.utf8) }
    private static let monthBytes = months.map { Array($0.utf8) }

    /// Exactly `Sun, 06 Nov 1994 08:49:37 GMT` (29 bytes, nothing around it), or nil.
    private static func parseIMFFixdate(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard b.count == 29, b[3] == 0x2C, b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20, b[19] == 0x3A,
            b[22] == 0x3A, b[25] == 0x20, b[26] == 0x47, b[27] == 0x4D, b[28] == 0x54
        else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            var value = 0
            for i in at..<(at + count) {
                let d = Int(b[i]) - 48
                guard (0...9).contains(d) else { return nil }
                value = value * 10 + d
            }
            return value
        }
        func matches(_ name: [UInt8], at: Int) -> Bool { b[at] == name[0] && b[at + 1] == name[1] && b[at + 2] == name[2] }
        guard weekdayBytes.contains(where: { matches($0, at: 0) }),
            let month = monthBytes.firstIndex(where: { matches($0, at: 8) }),
            let day = digits(5, 2), let year = digits(12, 4), let h = digits(17, 2), let mi = digits(20, 2),
            let s = digits(23, 2), (1...31).contains(day), h <= 23, mi <= 59, s <= 60
        else { return nil }
        return Double(daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + h * 3600 + mi * 60 + s)
    }

    private static func monthIndex(_ s: some StringProtocol) -> Int? {
        months.firstIndex(of: String(s)).map { $0 + 1 }
    }

    /// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
    static func civil(fromDays z: Int) -> (Int, Int, Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
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
