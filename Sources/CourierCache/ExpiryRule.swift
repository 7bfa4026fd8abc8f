/// When a record has expired and whether it may be returned: pure, with the time as a parameter.
///
/// A record with TTL 0 expires `defaultExpiry` after its last access (sliding); one with a TTL > 0 expires
/// that long after it was stored (absolute). The comparison is strict, as in SPTPersistentCache: a record is
/// still fresh at exactly its deadline, and a time in the future never expires. A locked record is returned
/// even when expired.
struct ExpiryRule: Hashable, Sendable {
    /// The sliding expiry of TTL-0 records, in nanoseconds.
    var defaultExpiryNanoseconds: Int64

    /// Whether `header` has expired at `now` (nanoseconds since the Unix epoch).
    func isExpired(_ header: RecordHeader, now: Int64) -> Bool {
        let (start, limit): (Int64, Int64)
        if header.ttlNanoseconds == 0 {
            (start, limit) = (header.accessTime, defaultExpiryNanoseconds)
        } else {
            (start, limit) = (header.storeTime, Int64(clamping: header.ttlNanoseconds))
        }
        let (age, overflow) = now.subtractingReportingOverflow(start)
        // An overflowing age is a corrupt-looking but CRC-valid time far in the past or future: only the past
        // (now > start) can be expired.
        if overflow { return now > start }
        return age > limit
    }

    /// When `header` expires (nanoseconds since the Unix epoch): it is expired at any later instant.
    func expiryTime(_ header: RecordHeader) -> Int64 {
        if header.ttlNanoseconds == 0 { return header.accessTime.addingReportingOverflow(defaultExpiryNanoseconds).partialValue }
        return header.storeTime.addingReportingOverflow(Int64(clamping: header.ttlNanoseconds)).partialValue
    }

    /// Whether a load may return `header` at `now`: it is locked, or it has not expired.
    func canBeReturned(_ header: RecordHeader, now: Int64) -> Bool {
        header.lockCount > 0 || !isExpired(header, now: now)
    }
}
