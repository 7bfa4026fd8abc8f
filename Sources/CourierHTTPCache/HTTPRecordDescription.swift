package import CourierCache
internal import CourierCore

/// What `courier cache` shows of a record the HTTP cache filed: the request it answers (method, URL, the varied
/// request fields, whether credentials asked), the stored response, and its freshness now.
package struct HTTPRecordDescription: Sendable, Hashable {
    package var stored: StoredResponse
    /// Whether the record is filed under a requester's identity (the request carried credentials).
    package var credentialed: Bool
    /// The freshness lifetime the cache gave the response when it filed it (with its heuristic, if it used one),
    /// in seconds.
    package var lifetime: Double
    /// The response's current age (RFC 9111 §4.2.3), in seconds.
    package var age: Double

    /// Whether the response is fresh now.
    package var isFresh: Bool { lifetime > age }

    /// `GET https://host/path [accept-language: de]`: the method, the URL and the varied fields.
    package var request: String {
        let varied = stored.variedFields.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        return "\(stored.method) \(stored.url)" + (varied.isEmpty ? "" : " [\(varied)]")
    }

    /// The description of `record`, or nil when it is not a stored response (a `Vary` index, another program's
    /// record, or bytes that do not decode). The lifetime is read back from the record's TTL, which the cache
    /// sets to the lifetime plus its `retention` (see ``HTTPCache/store(method:url:identity:requestHeaders:status:reason:headers:body:requestTime:responseTime:heuristicLifetime:)``);
    /// `now` is in seconds since the Unix epoch.
    package init?(record: CacheRecord, retention: Duration = HTTPCache.defaultRetention, now: Double) {
        guard !record.key.hasPrefix("vary "), let stored = try? StoredResponse(decoding: record.data) else { return nil }
        self.stored = stored
        self.credentialed = record.key.split(separator: " vary ", maxSplits: 1).first?.contains(" #") ?? false
        self.lifetime = max(0, (record.ttl - retention).seconds)
        self.age = Freshness.currentAge(
            headers: stored.headers, requestTime: Double(stored.requestTime) / 1e9,
            responseTime: Double(stored.responseTime) / 1e9, now: now
        )
    }
}
