import CourierCache
import CourierCore
import CourierCrypto
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@testable import CourierHTTPCache

/// The decoded records kept in memory in front of the record store: used only while the file is the one they
/// were read from, whoever replaced it; access times still move now and then; expiry still holds. Two caches over
/// one directory stand for two processes sharing it (each has its own memory and descriptors).
@Suite(.onThreadsOfTheirOwn) struct HTTPCacheMemoryTests {
    let url = HTTPURL("https://api.example.com/v1/feed")!
    let directory = NSTemporaryDirectory() + "courier-http-memory-\(UUID().uuidString)"
    /// The record store's wall clock, in nanoseconds, moved by the tests.
    final class Clock: Sendable {
        let value = Mutex<Int64>(1_795_000_000_000_000_000)
        func withLock<T>(_ body: (inout Int64) -> T) -> T { value.withLock { body(&$0) } }
    }
    let clock = Clock()

    func makeCache(memoryBudget: Int = 8 << 20) throws -> HTTPCache {
        var options = RecordStoreOptions(directory: directory)
        options.fsync = .none
        let clock = self.clock
        options.clock = WallClock { clock.withLock { $0 } }
        return HTTPCache(store: try RecordStore(options: options), memoryBudget: memoryBudget)
    }

    var now: Double { Double(clock.withLock { $0 }) / 1e9 }

    func store(_ cache: HTTPCache, body: String, maxAge: Int = 600) async throws {
        let verdict = try await cache.store(
            method: .get, url: url, identity: nil, requestHeaders: [:], status: 200, reason: "OK",
            headers: ["Cache-Control": "max-age=\(maxAge)"], body: Array(body.utf8), requestTime: now, responseTime: now,
            heuristicLifetime: 0
        )
        #expect(verdict == .storable)
    }

    func body(_ cache: HTTPCache) async throws -> String? {
        try await cache.lookup(method: .get, url: url, identity: nil, requestHeaders: [:], now: now, heuristicLifetime: 0)
            .map { String(decoding: $0.stored.body, as: UTF8.self) }
    }

    @Test func aResponseReplacedOrRemovedByAnotherProcessIsNeverServedFromMemory() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mine = try makeCache()
        let theirs = try makeCache()
        try await store(mine, body: "first")
        #expect(try await body(mine) == "first")
        #expect(try await body(mine) == "first")  // from memory now
        try await store(theirs, body: "second")
        #expect(try await body(mine) == "second")
        try await theirs.invalidate(method: .post, url: url, status: 204, responseHeaders: [:], identity: nil)
        #expect(try await body(mine) == nil)
    }

    @Test func aCorruptFileRenamedIntoPlaceIsNotHiddenByTheMemoryCopy() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        try await store(cache, body: "good")
        #expect(try await body(cache) == "good")
        // Another writer puts garbage in the record's place (a new file, renamed over the old one).
        let key = HTTPCacheKey(method: .get, url: url, identity: nil).primary
        let fileName = SHA256.hex(SHA256.hash(Array(key.utf8)))
        let path = try #require(FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String }.first { $0.hasSuffix(fileName) })
        let scratch = directory + "/scratch"
        try Data(repeating: 0x5A, count: 300).write(to: URL(fileURLWithPath: scratch))
        #expect(rename(scratch, directory + "/" + path) == 0)
        #expect(try await body(cache) == nil)
    }

    @Test func memoryHitsMoveTheAccessTimeOnDiskAtMostOncePerInterval() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        try await store(cache, body: "hot", maxAge: 3600)
        let key = HTTPCacheKey(method: .get, url: url, identity: nil).primary
        #expect(try await body(cache) == "hot")
        let read = try #require(try await cache.store.peek(key)).accessTime
        clock.withLock { $0 += 30_000_000_000 }
        #expect(try await body(cache) == "hot")
        #expect(try #require(try await cache.store.peek(key)).accessTime == read)
        clock.withLock { $0 += 31_000_000_000 }
        #expect(try await body(cache) == "hot")
        #expect(try #require(try await cache.store.peek(key)).accessTime == read + 61_000_000_000)
    }

    @Test func aMemoryCopyIsNotUsedPastTheRecordsExpiry() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache()
        try await store(cache, body: "short", maxAge: 10)
        #expect(try await body(cache) == "short")
        // The record lives for its freshness plus the retention (a day): past that, nothing answers.
        clock.withLock { $0 += (10 + 86_400 + 1) * 1_000_000_000 }
        #expect(try await body(cache) == nil)
    }

    @Test func withoutAMemoryBudgetEveryLookupReadsTheStore() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try makeCache(memoryBudget: 0)
        try await store(cache, body: "disk")
        let key = HTTPCacheKey(method: .get, url: url, identity: nil).primary
        #expect(try await body(cache) == "disk")
        clock.withLock { $0 += 1_000_000_000 }
        #expect(try await body(cache) == "disk")
        // Every load moved the access time.
        #expect(try #require(try await cache.store.peek(key)).accessTime == clock.withLock { $0 })
    }

    @Test func theMemoryStaysWithinItsBudget() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let memory = MemoryFront(budget: 100_000)
        let location = try makeCache().store.location(of: "any")
        let fingerprint = RecordFingerprint(device: 1, inode: 1, size: 1, birthSeconds: 1, birthNanoseconds: 1)
        for index in 0..<100 {
            let stored = StoredResponse(
                method: .get, url: "https://x/\(index)", variedFields: [], status: 200, reason: "OK", headers: [:],
                requestTime: 0, responseTime: 0, body: Array(repeating: 1, count: 5_000)
            )
            let record = CacheRecord(key: "k\(index)", data: [], ttl: .seconds(60), lockCount: 0, storeTime: 0, accessTime: 0)
            memory.keep("k\(index)", .stored(stored), record: record, location: location, fingerprint: fingerprint, now: 0)
        }
        // The most recent are kept, the oldest dropped, and the estimate of what is kept never exceeds the budget.
        #expect(memory.use("k99", current: fingerprint, now: 0) != nil)
        #expect(memory.use("k0", current: fingerprint, now: 0) == nil)
        #expect(memory.keptBytes <= 100_000)
    }
}
