import CourierCache
import CourierCore
import CourierTestSupport
import Foundation
import Testing

@testable import CourierHTTPCache

/// The cache's stages over a real record store on disk, with fixed instants (seconds since the epoch).
@Suite(.onThreadsOfTheirOwn) struct HTTPCacheTests {
    let t0 = 1_795_000_000.0
    let url = HTTPURL("https://api.example.com/v1/items")!
    let directory = NSTemporaryDirectory() + "courier-http-cache-\(UUID().uuidString)"

    func makeCache() throws -> HTTPCache {
        var options = RecordStoreOptions(directory: directory)
        options.fsync = .none
        return HTTPCache(store: try RecordStore(options: options))
    }

    func store(
        _ cache: HTTPCache, headers: HTTPHeaders, body: String = "items", request: HTTPHeaders = [:], identity: String? = nil,
        at time: Double? = nil
    ) async throws -> Storability {
        try await cache.store(
            method: .get, url: url, identity: identity, requestHeaders: request, status: 200, reason: "OK",
            headers: headers, body: Array(body.utf8), requestTime: time ?? t0, responseTime: time ?? t0, heuristicLifetime: 300
        )
    }

    func lookup(_ cache: HTTPCache, at now: Double, request: HTTPHeaders = [:], identity: String? = nil) async throws -> HTTPCache.Lookup? {
        try await cache.lookup(method: .get, url: url, identity: identity, requestHeaders: request, now: now, heuristicLifetime: 300)
    }

    @Test func freshThenStaleThenFreshenedByA304() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        #expect(try await store(cache, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]) == .storable)
        let fresh = try #require(try await lookup(cache, at: t0 + 30))
        #expect(fresh.decision == .fresh)
        #expect(fresh.stored.body == Array("items".utf8))
        // HEAD reads what GET stored.
        #expect(try await cache.lookup(method: .head, url: url, identity: nil, requestHeaders: [:], now: t0 + 30, heuristicLifetime: 300) != nil)

        let stale = try #require(try await lookup(cache, at: t0 + 90))
        #expect(stale.decision == .revalidate)
        #expect(stale.conditionalHeaders["If-None-Match"] == "\"v1\"")
        let freshened = try #require(try await cache.freshen(
            stale, notModifiedHeaders: ["ETag": "\"v1\"", "Cache-Control": "max-age=120"], requestTime: t0 + 90,
            responseTime: t0 + 90, heuristicLifetime: 300
        ))
        #expect(freshened.headers["Cache-Control"] == "max-age=120")
        #expect(try await lookup(cache, at: t0 + 150)?.decision == .fresh)
        // A 304 for another representation does not freshen it.
        #expect(try await cache.freshen(
            stale, notModifiedHeaders: ["ETag": "\"v2\""], requestTime: t0 + 90, responseTime: t0 + 90, heuristicLifetime: 300
        ) == nil)
    }

    @Test func whatMayNotBeStoredIsNot() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        #expect(try await store(cache, headers: ["Cache-Control": "no-store"]) == .notStorable(.responseNoStore))
        #expect(try await lookup(cache, at: t0) == nil)
        #expect(try await store(cache, headers: ["Vary": "*", "Cache-Control": "max-age=60"]) == .notStorable(.varyAll))
        #expect(try await lookup(cache, at: t0) == nil)
    }

    @Test func variantsAreKeptApartByTheVariedFields() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]
        _ = try await store(cache, headers: headers, body: "Hallo", request: ["Accept-Language": "de"])
        #expect(try await lookup(cache, at: t0 + 1, request: ["Accept-Language": "de"])?.stored.body == Array("Hallo".utf8))
        #expect(try await lookup(cache, at: t0 + 1, request: ["Accept-Language": "en"]) == nil)
        _ = try await store(cache, headers: headers, body: "Hello", request: ["Accept-Language": "en"])
        #expect(try await lookup(cache, at: t0 + 1, request: ["Accept-Language": "en"])?.stored.body == Array("Hello".utf8))
        #expect(try await lookup(cache, at: t0 + 1, request: ["Accept-Language": "de"])?.stored.body == Array("Hallo".utf8))
    }

    @Test func twoUsersNeverSeeEachOthersResponses() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        // An authorised request is stored only when the response allows it (RFC 9111 §3.5), and per identity.
        let headers: HTTPHeaders = ["Cache-Control": "private, must-revalidate, max-age=60"]
        #expect(try await store(cache, headers: headers, body: "alice's", request: ["Authorization": "Bearer a"], identity: "alice") == .storable)
        #expect(try await lookup(cache, at: t0 + 1, request: ["Authorization": "Bearer a"], identity: "alice") != nil)
        #expect(try await lookup(cache, at: t0 + 1, request: ["Authorization": "Bearer b"], identity: "bob") == nil)
        #expect(try await lookup(cache, at: t0 + 1) == nil)
    }

    @Test func anUnsafeMethodInvalidatesTheURL() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        _ = try await store(cache, headers: ["Cache-Control": "max-age=60"])
        try await cache.invalidate(method: .post, url: url, status: 201, responseHeaders: [:], identity: nil)
        #expect(try await lookup(cache, at: t0 + 1) == nil)
        // A failed unsafe request invalidates nothing.
        _ = try await store(cache, headers: ["Cache-Control": "max-age=60"])
        try await cache.invalidate(method: .delete, url: url, status: 500, responseHeaders: [:], identity: nil)
        #expect(try await lookup(cache, at: t0 + 1) != nil)
    }

    @Test func aRecordThatDoesNotDecodeIsAMissAndIsRemoved() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        let key = HTTPCacheKey(method: .get, url: url, identity: nil)
        try await cache.store.store(Array("not a stored response".utf8), forKey: key.primary)
        #expect(try await lookup(cache, at: t0) == nil)
        #expect(try await cache.store.load(key.primary) == nil)
    }
}
