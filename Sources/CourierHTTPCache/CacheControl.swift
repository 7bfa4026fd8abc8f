package import CourierCore

/// The directives of the `Cache-Control` fields of one request or response (RFC 9111 §5.2), as a private
/// cache reads them.
///
/// Parsing follows RFC 9111 §5.2 and RFC 9110 §5.6: any number of fields, each a comma-separated list of
/// `name` or `name=value` where the value is a token or a quoted-string (so `no-cache="a, b"` is one
/// directive); names are case-insensitive; unknown directives and empty list elements are ignored; both the
/// token and the quoted form of an argument are accepted (§5.2: recipients "ought to accept both forms").
///
/// Decisions where the RFC leaves a choice:
/// - A directive given more than once: the first occurrence wins (§4.2.1 allows "the first occurrence").
/// - An invalid delta-seconds (`max-age=-1`, `max-age=1a`, `max-age=`) takes the directive's most restrictive
///   meaning (§4.2.1: invalid freshness information is "encouraged" to be treated as stale): `max-age` (request
///   or response) becomes 0; `max-stale`, `min-fresh`, `stale-while-revalidate` and `stale-if-error` are ignored,
///   granting nothing.
/// - A delta-seconds larger than 2³¹ saturates at 2³¹ (§1.2.2).
/// - The qualified forms `no-cache="field"` and `private="field"` are read (their field names are kept) but
///   act as the unqualified forms; see ``noCacheFields``.
package struct CacheControl: Hashable, Sendable, CustomStringConvertible {
    /// `max-age` (§5.2.1.1 on a request, §5.2.2.1 on a response), in seconds.
    package var maxAge: Int64?
    /// `s-maxage` (§5.2.2.10), in seconds. Kept for §3.5 (it permits storing an authorised response); a private
    /// cache ignores it for freshness.
    package var sharedMaxAge: Int64?
    /// `no-store` (§5.2.1.5, §5.2.2.5).
    package var noStore = false
    /// `no-cache` (§5.2.1.4, §5.2.2.4), qualified or not.
    package var noCache = false
    /// The field names of a qualified `no-cache="…"` (lower-cased), empty for the unqualified form. The cache
    /// treats the qualified form as unqualified: it revalidates the whole response rather than strip fields.
    package var noCacheFields: [String] = []
    /// `must-revalidate` (§5.2.2.2).
    package var mustRevalidate = false
    /// `proxy-revalidate` (§5.2.2.8): for shared caches; kept for §3.5 and inspection only.
    package var proxyRevalidate = false
    /// `private` (§5.2.2.7), qualified or not: a private cache may store the response.
    package var isPrivate = false
    /// `public` (§5.2.2.9).
    package var isPublic = false
    /// `must-understand` (§5.2.2.3).
    package var mustUnderstand = false
    /// `no-transform` (§5.2.1.6, §5.2.2.6): kept for inspection; the cache never transforms.
    package var noTransform = false
    /// `immutable` (RFC 8246 §2).
    package var immutable = false
    /// `stale-while-revalidate` (RFC 5861 §3), in seconds.
    package var staleWhileRevalidate: Int64?
    /// `stale-if-error` (RFC 5861 §4), in seconds; on a request or a response.
    package var staleIfError: Int64?
    /// Request `max-stale` (§5.2.1.2).
    package var maxStale: MaxStale?
    /// Request `min-fresh` (§5.2.1.3), in seconds.
    package var minFresh: Int64?
    /// Request `only-if-cached` (§5.2.1.7).
    package var onlyIfCached = false

    /// Request `max-stale`: without a value the client accepts any staleness.
    package enum MaxStale: Hashable, Sendable {
        case any
        case seconds(Int64)

        /// Whether a response `staleness` seconds past its lifetime is acceptable.
        package func accepts(staleness: Double) -> Bool {
            switch self {
            case .any: true
            case .seconds(let limit): staleness <= Double(limit)
            }
        }
    }

    /// The largest delta-seconds kept: 2³¹ (RFC 9111 §1.2.2).
    package static let maximumDeltaSeconds: Int64 = 2_147_483_648

    /// No directives.
    package init() {}

    /// The directives of every `Cache-Control` field in `headers`, in order.
    package init(_ headers: HTTPHeaders) {
        self.init(fieldValues: headers.values(for: "Cache-Control"))
    }

    /// The directives of the given `Cache-Control` field values, in order.
    package init(fieldValues: [String]) {
        // The known directives applied so far, one bit each: the first occurrence wins, and no set of names is
        // built for the fields of every cache lookup.
        var seen: UInt32 = 0
        for value in fieldValues {
            CacheControl.forEachDirective(in: value) { name, argument in apply(name: name, argument: argument, seen: &seen) }
        }
    }

    private mutating func apply(name: String, argument: String?, seen: inout UInt32) {
        func first(_ bit: Int) -> Bool {
            defer { seen |= 1 << bit }
            return seen & (1 << bit) == 0
        }
        switch name {
        case "max-age": if first(0) { maxAge = CacheControl.deltaSeconds(argument) ?? 0 }
        case "s-maxage": if first(1) { sharedMaxAge = CacheControl.deltaSeconds(argument) ?? 0 }
        case "no-store": noStore = true
        case "no-cache":
            if first(2) {
                noCache = true
                noCacheFields = CacheControl.fieldNames(argument)
            }
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-understand": mustUnderstand = true
        case "no-transform": noTransform = true
        case "immutable": immutable = true
        case "stale-while-revalidate": if first(3) { staleWhileRevalidate = CacheControl.deltaSeconds(argument) }
        case "stale-if-error": if first(4) { staleIfError = CacheControl.deltaSeconds(argument) }
        case "max-stale":
            if first(5) {
                if let argument {
                    maxStale = CacheControl.deltaSeconds(argument).map(MaxStale.seconds)
                } else {
                    maxStale = .any
                }
            }
        case "min-fresh": if first(6) { minFresh = CacheControl.deltaSeconds(argument) }
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// A delta-seconds argument (RFC 9111 §1.2.2: `1*DIGIT`), saturated at 2³¹; nil when absent or invalid.
    static func deltaSeconds(_ argument: String?) -> Int64? {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        let digits = argument.drop { $0 == "0" }
        guard digits.count <= 10, let value = Int64(digits.isEmpty ? "0" : String(digits)) else {
            return maximumDeltaSeconds
        }
        return min(value, maximumDeltaSeconds)
    }

    /// The lower-cased field names of a qualified directive's argument (`"Set-Cookie, X-A"`), split at commas as
    /// bytes (``HTTPList``). Names that are not tokens are kept as sent (they are only read for inspection).
    private static func fieldNames(_ argument: String?) -> [String] {
        guard let argument else { return [] }
        return HTTPList.elements(of: argument).map { $0.lowercased() }
    }

    /// Calls `body` with each directive of one field value: its lower-cased name and unquoted argument, in
    /// order. Commas inside quoted strings do not split; a backslash in a quoted string escapes the next byte.
    ///
    /// Read byte by byte over UTF-8, as RFC 9110's grammar is written (a `"` followed by a combining mark is
    /// still a quote), and without a `String` per character: a fresh cache hit reads the stored response's
    /// field on every lookup.
    static func forEachDirective(in value: String, _ body: (_ name: String, _ argument: String?) -> Void) {
        var bytes = value.utf8[...]
        while !bytes.isEmpty {
            // One list element: up to the next comma outside a quoted string.
            var name: [UInt8] = []
            var argument: [UInt8]?
            var inQuotes = false
            var quoted = false
            var escaped = false
            while let byte = bytes.popFirst() {
                if inQuotes {
                    if escaped {
                        argument?.append(byte)
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                    } else {
                        argument?.append(byte)
                    }
                    continue
                }
                if byte == UInt8(ascii: ",") { break }
                if argument == nil {
                    if byte == UInt8(ascii: "=") { argument = [] } else { name.append(byte) }
                } else if byte == UInt8(ascii: "\""), argument?.isEmpty == true, !quoted {
                    inQuotes = true
                    quoted = true
                } else {
                    argument?.append(byte)
                }
            }
            let trimmedName = HTTPList.trimmingWhitespace(name)
            guard !trimmedName.isEmpty else { continue }
            let lowered = String(decoding: trimmedName.lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
            let text = argument.map { String(decoding: quoted ? $0[...] : HTTPList.trimmingWhitespace($0), as: UTF8.self) }
            body(lowered, text)
        }
    }
}
