internal import CourierCore

/// Parses the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of the three forms
/// RFC 9110 §5.6.7 requires recipients to accept (IMF-fixdate, obsolete RFC 850 and asctime).
package enum RetryAfter {
    /// The delay a `Retry-After` value asks for, measured from `now` (seconds since the Unix epoch, UTC, as the
    /// caller's wall clock reads it). A date in the past gives zero. Nil for anything malformed.
    package static func delay(_ value: String, now: Double) -> Duration? {
        let v = value.trimmingHTTPWhitespace
        if !v.isEmpty, v.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // delay-seconds; clamp absurd values instead of overflowing.
            guard v.count <= 12, let seconds = Int64(v) else { return .seconds(Int64(999_999_999_999)) }
            return .seconds(seconds)
        }
        guard let date = httpDate(v) else { return nil }
        return .seconds(max(0, date - now))
    }

    /// Seconds since the Unix epoch for an HTTP-date, or nil (``HTTPDate/parse(_:)``).
    package static func httpDate(_ text: Substring) -> Double? { HTTPDate.parse(text) }
}
