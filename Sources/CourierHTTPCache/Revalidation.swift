package import CourierCore

/// The stored response refreshed by a 304 (Not Modified) answer to a conditional request (RFC 9111 §4.3.3,
/// §4.3.4, §3.2).
///
/// The 304's header fields replace the stored ones of the same name and the others are added (§3.2), except:
/// `Content-Length` (§3.2: the 304 describes no content), and the hop-by-hop fields a cache does not store
/// (§3.1): `Connection`, the fields it names, `Proxy-Connection`, `Keep-Alive`, `TE`, `Transfer-Encoding`,
/// `Upgrade`. The stored status and content are kept. The stored request and response times become the
/// revalidation's, so the age (§4.2.3) is computed from the 304's `Date` and `Age` from now on: the stored
/// `Date` and `Age` are dropped when the 304 has none (they described the old response's age; a stored `Age:
/// 100` kept would make the freshened response 100 s old again).
package struct Revalidation: Hashable, Sendable {
    /// The stored response's header fields updated from the 304.
    package var headers: HTTPHeaders
    /// When the conditional request was sent: the stored response's new `requestTime`.
    package var requestTime: Double
    /// When the 304 was received: the stored response's new `responseTime`.
    package var responseTime: Double

    /// The fields a cache never takes from a 304 into a stored response (lower case).
    package static let excludedFields: Set<String> = [
        "content-length", "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade",
    ]

    /// The fields that date the response: they describe the 304 after a revalidation, never the old response.
    static let agingFields: Set<String> = ["age", "date"]

    /// The stored response with `storedHeaders` refreshed by a 304 with `notModifiedHeaders`, for a conditional
    /// request sent at `requestTime` and answered at `responseTime`.
    package init(
        storedHeaders: HTTPHeaders, notModifiedHeaders: HTTPHeaders, requestTime: Double, responseTime: Double
    ) {
        let excluded = Revalidation.excludedFields.union(notModifiedHeaders.tokens(for: "Connection"))
        var updates: [String: [String]] = [:]
        var order: [String] = []
        for field in notModifiedHeaders where !excluded.contains(field.name.lowercased()) {
            let key = field.name.lowercased()
            if updates[key] == nil { order.append(field.name) }
            updates[key, default: []].append(field.value)
        }
        var merged = HTTPHeaders()
        var written: Set<String> = []
        for field in storedHeaders {
            let key = field.name.lowercased()
            guard let values = updates[key] else {
                if !Revalidation.agingFields.contains(key) { merged.add(name: field.name, value: field.value) }
                continue
            }
            // Every stored line of a replaced field gives way to all of the 304's lines, where the first was.
            if written.insert(key).inserted {
                for value in values { merged.add(name: field.name, value: value) }
            }
        }
        for name in order where !written.contains(name.lowercased()) {
            for value in updates[name.lowercased()] ?? [] { merged.add(name: name, value: value) }
        }
        headers = merged
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    /// Whether a 304 with `notModifiedHeaders` refers to the stored response with `storedHeaders`, the one the
    /// conditional request was made from (§4.3.4): when the 304 has an `ETag`, the stored `ETag` must match it
    /// (weak comparison, RFC 9110 §8.8.3.2); else when it has a `Last-Modified`, the stored one must be equal;
    /// a 304 with neither refers to it. When it does not, the stored response is not updated; the loader
    /// repeats the request unconditionally.
    package static func matches(storedHeaders: HTTPHeaders, notModifiedHeaders: HTTPHeaders) -> Bool {
        if let tag = notModifiedHeaders["ETag"] {
            guard let stored = storedHeaders["ETag"] else { return false }
            return opaqueTag(tag) == opaqueTag(stored)
        }
        if let modified = notModifiedHeaders["Last-Modified"] {
            guard let stored = storedHeaders["Last-Modified"], let a = HTTPDate.parse(modified) else { return false }
            return HTTPDate.parse(stored) == a
        }
        return true
    }

    /// An entity tag without its weakness indicator, for weak comparison.
    private static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = tag.trimmingHTTPWhitespace
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)
    }
}
