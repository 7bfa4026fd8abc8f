package import CourierCache
package import CourierCore

/// A private HTTP cache (RFC 9111) over a ``RecordStore``: finds the stored response a request may use and says
/// how (fresh, stale but acceptable, to revalidate), files storable responses under their key and variant,
/// freshens a stored response from a 304, and invalidates after unsafe methods. The data loader performs these as
/// stages of its load; this type holds no HTTP connection and reads no clock (instants are parameters, in seconds
/// since the Unix epoch, as the rules take them).
package final class HTTPCache: Sendable {
    /// Where the responses are filed.
    package let store: RecordStore
    /// How long a stored response is kept beyond its freshness (for revalidation, `stale-if-error` and offline
    /// answers) before the record store may collect it.
    package let retention: Duration

    /// A day: how long a stale response is kept by default.
    package static let defaultRetention: Duration = .seconds(86_400)

    /// Recently read records, decoded, in front of the store (see ``MemoryFront``).
    private let memory: MemoryFront

    /// - Parameters:
    ///   - store: where the responses are filed.
    ///   - retention: how long a response is kept beyond its freshness.
    ///   - memoryBudget: the bytes of recently used responses kept decoded in memory (8 MiB by default; 0: none).
    ///     A memory copy is used only while the record file is still the one it was read from (its
    ///     ``RecordFingerprint``), so processes sharing the directory never see each other's replaced responses.
    package init(store: RecordStore, retention: Duration = HTTPCache.defaultRetention, memoryBudget: Int = 8 << 20) {
        self.store = store
        self.retention = retention
        self.memory = MemoryFront(budget: memoryBudget)
    }

    /// A stored response a request may use, and how.
    package struct Lookup: Sendable, Hashable {
        package var stored: StoredResponse
        package var freshness: Freshness
        /// Serve it as it is, serve it and revalidate, or revalidate first (see ``ReuseDecision``).
        package var decision: ReuseDecision
        /// The request's fields as looked up with.
        package var requestHeaders: HTTPHeaders
        /// The `Cache-Control` directives of ``requestHeaders`` (the stored response's are
        /// ``StoredResponse/cacheControl``).
        package var requestControl: CacheControl
        /// The request's fields made conditional on the stored response's validators (unchanged when it has none).
        /// Computed when asked: a fresh hit never needs it.
        package var conditionalHeaders: HTTPHeaders {
            Validators(storedHeaders: stored.headers).conditionalHeaders(requestHeaders)
        }
        /// The record key it is filed under (to freshen it after a 304).
        package var recordKey: String
    }

    /// The stored response for a `GET` or `HEAD` of `url` by `identity` whose varied fields `requestHeaders`
    /// matches, or nil. A record that does not decode is removed and reads as missing.
    package func lookup(
        method: HTTPMethod, url: HTTPURL, identity: String?, requestHeaders: HTTPHeaders, now: Double,
        heuristicLifetime: Double
    ) async throws(CacheError) -> Lookup? {
        var removed: String?
        return try await lookup(
            method: method, url: url, identity: identity, requestHeaders: requestHeaders, now: now,
            heuristicLifetime: heuristicLifetime, removedCorrupt: &removed
        )
    }

    /// ``lookup(method:url:identity:requestHeaders:now:heuristicLifetime:)``, saying in `removedCorrupt` why a
    /// record it read was corrupt and removed (the lookup then goes on as if it had not been there).
    package func lookup(
        method: HTTPMethod, url: HTTPURL, identity: String?, requestHeaders: HTTPHeaders, now: Double,
        heuristicLifetime: Double, removedCorrupt: inout String?
    ) async throws(CacheError) -> Lookup? {
        guard method == .get || method == .head else { return nil }
        let key = HTTPCacheKey(method: method, url: url, identity: identity)
        let varyNames = try await varyNames(for: key, removedCorrupt: &removedCorrupt)
        let recordKey = key.variant(varyNames: varyNames, request: requestHeaders)
        guard case .stored(let stored)? = try await load(recordKey, removedCorrupt: &removedCorrupt, decode: { record in
            (try? StoredResponse(decoding: record.data)).map(MemoryFront.Value.stored)
        }) else { return nil }
        let freshness = Freshness(
            status: stored.status, headers: stored.headers, control: stored.cacheControl,
            requestTime: Self.seconds(stored.requestTime), responseTime: Self.seconds(stored.responseTime), now: now,
            heuristicLifetime: heuristicLifetime
        )
        let requestControl = CacheControl(requestHeaders)
        let decision = ReuseDecision(freshness: freshness, request: requestControl, response: stored.cacheControl)
        return Lookup(
            stored: stored, freshness: freshness, decision: decision, requestHeaders: requestHeaders,
            requestControl: requestControl, recordKey: recordKey
        )
    }

    /// Files a response when RFC 9111 allows a private cache to store it; returns the verdict (with the reason
    /// when it is not stored).
    @discardableResult
    package func store(
        method: HTTPMethod, url: HTTPURL, identity: String?, requestHeaders: HTTPHeaders, status: Int, reason: String,
        headers: HTTPHeaders, body: [UInt8], requestTime: Double, responseTime: Double, heuristicLifetime: Double
    ) async throws(CacheError) -> Storability {
        let verdict = Storability(method: method, requestHeaders: requestHeaders, status: status, responseHeaders: headers)
        guard verdict.isStorable else { return verdict }
        let key = HTTPCacheKey(method: method, url: url, identity: identity)
        let names = HTTPCacheKey.varyNames(of: headers)
        let stored = StoredResponse(
            method: method, url: url.description,
            variedFields: names.map { HTTPHeaders.Field(name: $0, value: requestHeaders.values(for: $0).joined(separator: ",")) },
            status: status, reason: reason, headers: headers, requestTime: Self.nanoseconds(requestTime),
            responseTime: Self.nanoseconds(responseTime), body: body
        )
        let lifetime = Freshness.lifetime(status: status, headers: headers, responseTime: responseTime, heuristicLifetime: heuristicLifetime)
        let ttl = Duration.seconds(max(lifetime, 0)) + retention
        let variant = key.variant(varyNames: names, request: requestHeaders)
        memory.forget([key.varyIndex, variant])
        try await store.store(Array(names.joined(separator: "\n").utf8), forKey: key.varyIndex, ttl: ttl)
        try await store.store(stored.encoded(), forKey: variant, ttl: ttl)
        return verdict
    }

    /// After a 304 that matches the stored response of `lookup`: its fields and times freshened (RFC 9111
    /// §4.3.4), filed again, and returned. Nil when the 304 does not match it (the caller then fetches anew).
    package func freshen(
        _ lookup: Lookup, notModifiedHeaders: HTTPHeaders, requestTime: Double, responseTime: Double,
        heuristicLifetime: Double
    ) async throws(CacheError) -> StoredResponse? {
        guard Revalidation.matches(storedHeaders: lookup.stored.headers, notModifiedHeaders: notModifiedHeaders) else { return nil }
        let merged = Revalidation(
            storedHeaders: lookup.stored.headers, notModifiedHeaders: notModifiedHeaders, requestTime: requestTime,
            responseTime: responseTime
        )
        var fresh = lookup.stored
        fresh.headers = merged.headers
        fresh.requestTime = Self.nanoseconds(merged.requestTime)
        fresh.responseTime = Self.nanoseconds(merged.responseTime)
        let lifetime = Freshness.lifetime(
            status: fresh.status, headers: fresh.headers, responseTime: merged.responseTime, heuristicLifetime: heuristicLifetime
        )
        memory.forget([lookup.recordKey])
        try await store.store(fresh.encoded(), forKey: lookup.recordKey, ttl: .seconds(max(lifetime, 0)) + retention)
        return fresh
    }

    /// After a response to an unsafe method (RFC 9111 §4.4): the stored responses of the URLs it invalidates are
    /// no longer found, for `identity` and for requests without credentials. Removing a URL's `Vary` index and
    /// its unvaried record is enough: a lookup finds a variant only through the index; orphaned variants are
    /// collected with the store's garbage.
    package func invalidate(
        method: HTTPMethod, url: HTTPURL, status: Int, responseHeaders: HTTPHeaders, identity: String?
    ) async throws(CacheError) {
        var keys: [String] = []
        for target in Invalidation.urls(method: method, url: url, status: status, responseHeaders: responseHeaders) {
            for owner in Set([identity, nil]) {
                let key = HTTPCacheKey(method: .get, url: target, identity: owner)
                keys += [key.varyIndex, key.primary]
            }
        }
        memory.forget(keys)
        if !keys.isEmpty { _ = try await store.remove(keys) }
    }

    /// The `Vary` field names last filed for `key` (none when there is no index).
    private func varyNames(for key: HTTPCacheKey, removedCorrupt: inout String?) async throws(CacheError) -> [String] {
        // An unvaried URL whose response is in memory: its own record's fingerprint, checked next, is enough.
        // Whatever replaces or removes that response rewrites or removes its record (an invalidation removes the
        // index and the unvaried record together); a newer response with `Vary` leaves it a stored response
        // without `Vary`, which matches every request (RFC 9111 §4.1), until it is collected or invalidated.
        if memory.isUnvaried(index: key.varyIndex, record: key.primary) { return [] }
        let index = try await load(key.varyIndex, removedCorrupt: &removedCorrupt) { record in
            let text = String(decoding: record.data, as: UTF8.self)
            return .varyNames(text.isEmpty ? [] : text.split(separator: "\n").map(String.init))
        }
        guard case .varyNames(let names)? = index else { return [] }
        return names
    }

    /// The record under `key`, decoded: from memory while the file is still the one it was read from, else from
    /// the store (and kept in memory). A record that does not decode is removed and reads as missing; why is put
    /// in `removedCorrupt`, as is the record store's reason for a corrupt file it removed.
    private func load(
        _ key: String, removedCorrupt: inout String?, decode: (CacheRecord) -> MemoryFront.Value?
    ) async throws(CacheError) -> MemoryFront.Value? {
        if let location = memory.location(of: key),
            let (value, touchDue) = memory.use(key, current: try store.fingerprint(at: location), now: store.options.clock.now())
        {
            // The store's LRU collection orders by access time: move it now and then, not on every hit.
            if touchDue { _ = try? await store.touch(key) }
            return value
        }
        let record: CacheRecord
        let fingerprint: RecordFingerprint?
        switch try await store.loadWithFingerprint(key) {
        case .found(let found, let print): (record, fingerprint) = (found, print)
        case .missing: return nil
        case .removedCorrupt(let why):
            removedCorrupt = why.description
            return nil
        }
        guard let value = decode(record) else {
            _ = try await store.remove([key])
            removedCorrupt = "it does not decode as a stored response"
            return nil
        }
        if let fingerprint, memory.budget > 0 {
            memory.keep(
                key, value, record: record, location: try store.location(of: key), fingerprint: fingerprint,
                now: store.options.clock.now()
            )
        }
        return value
    }

    static func seconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1e9 }
    static func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }
}
