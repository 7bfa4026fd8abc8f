import CCourierTestSupport
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCache

/// The ancestor's starred store tests, ported with a fixed seed and an injected clock, and its bugs shown fixed.
@Suite(.onThreadsOfTheirOwn) struct RecordStoreTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)
    let fixture = RecordFixture()

    init() throws { directory = try TemporaryDirectory() }

    func makeStore(_ configure: (inout RecordStoreOptions) -> Void = { _ in }) async throws -> RecordStore {
        let store = try RecordStore.forTest(directory, clock: clock, configure: configure)
        try await fixture.install(in: store)
        return store
    }

    func loads(_ store: RecordStore, _ entries: [RecordFixture.Entry]) async throws -> [Bool] {
        var result: [Bool] = []
        for entry in entries { result.append(try await store.load(entry.key) != nil) }
        return result
    }

    @Test func correctWriteAndRead() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 10)
        for entry in fixture.valid {
            let before = try store.rawHeader(of: entry.key)
            let record = try #require(try await store.load(entry.key))
            #expect(record.key == entry.key && record.data == entry.payload)
            #expect(record.lockCount == (entry.locked ? 1 : 0) && record.ttl == .seconds(entry.ttlSeconds))
            #expect(record.storeTime == testEpoch && record.accessTime == testEpoch)
            // The access time moves in place for every record (LRU); the rest of the header stays.
            let after = try store.rawHeader(of: entry.key)
            #expect(after.accessTime == clock.now)
            var expected = before
            expected.accessTime = clock.now
            #expect(after == expected)
        }
        // Every kind of corruption reads as missing, is removed and counted.
        for entry in fixture.corrupt {
            #expect(try await store.load(entry.key) == nil, "\(entry.corruption!)")
            #expect(!FileManager.default.fileExists(atPath: store.path(of: entry.key)), "\(entry.corruption!)")
        }
        #expect(store.statistics.corruptRecordsRemoved == fixture.corrupt.count)
        #expect(try store.filesOnDisk().count == fixture.valid.count)
    }

    @Test func loadWithPrefixLetsTheChooserPick() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        let abKeys = fixture.valid.map(\.key).filter { $0.hasPrefix("ab") }.sorted()
        let offered = Offered()
        let record = try await store.load(keysWithPrefix: "ab") { keys in offered.set(keys); return keys.last }
        #expect(offered.keys == abKeys)
        #expect(record?.key == abKeys.last)
        // The chooser declining is "not found", not an error; so is a prefix nothing has.
        #expect(try await store.load(keysWithPrefix: "ab") { _ in nil } == nil)
        #expect(try await store.load(keysWithPrefix: "zz") { $0.first } == nil)
    }

    @Test func lockAndUnlockCountAndLeaveTheAccessTime() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 5)
        for entry in fixture.valid {
            let before = try store.rawHeader(of: entry.key).accessTime
            let base: UInt32 = entry.locked ? 1 : 0
            #expect(try await store.lock(entry.key) == base + 1)
            #expect(try await store.lock(entry.key) == base + 2)
            #expect(try await store.unlock(entry.key) == base + 1)
            #expect(try store.rawHeader(of: entry.key).accessTime == before)
        }
        let unlocked = try #require(fixture.valid.first { !$0.locked })
        #expect(try await store.unlock(unlocked.key) == 0)
        // Below zero is an error, not a log line, and leaves the count at 0.
        await #expect(throws: CacheError(key: unlocked.key, operation: .unlock, reason: .notLocked)) {
            try await store.unlock(unlocked.key)
        }
        #expect(try store.rawHeader(of: unlocked.key).lockCount == 0)
        #expect(try await store.lock("missing") == nil)
        #expect(try await store.unlock("missing") == nil)
    }

    @Test func removeLeavesNothing() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        let removed = try await store.remove(fixture.entries.map(\.key))
        #expect(removed == fixture.entries.count)
        #expect(try await loads(store, fixture.entries).allSatisfy { !$0 })
        #expect(try store.filesOnDisk().isEmpty)
    }

    @Test func wipeLockedRemovesLockedRecordsAndCorruptFiles() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        let locked = fixture.valid.filter(\.locked)
        #expect(try await store.wipeLocked() == locked.count)
        for entry in fixture.valid { #expect(try await store.load(entry.key) != nil || entry.locked) }
        #expect(try await loads(store, locked).allSatisfy { !$0 })
        // The ancestor left corrupt files forever; here a wipe removes them too (those a header check finds).
        #expect(try store.filesOnDisk().count == fixture.headerValid.count - locked.count)
    }

    @Test func wipeUnlockedKeepsOnlyLockedRecords() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        // As in the ancestor, the record whose header is valid but whose payload is not goes with the unlocked.
        let unlocked = fixture.headerValid.filter { !$0.locked }
        #expect(try await store.wipeUnlocked() == unlocked.count)
        #expect(try await loads(store, fixture.valid) == fixture.valid.map(\.locked))
        #expect(try store.filesOnDisk().count == fixture.valid.filter(\.locked).count)
    }

    @Test func usedAndLockedSizes() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        func fileSize(_ entry: RecordFixture.Entry) throws -> Int64 {
            (try FileManager.default.attributesOfItem(atPath: store.path(of: entry.key))[.size] as! NSNumber).int64Value
        }
        let expectedTotal = try fixture.entries.reduce(Int64(0)) { $0 + (try fileSize($1)) }
        let validTotal = fixture.valid.reduce(Int64(0)) { $0 + Int64(64 + $1.key.utf8.count + $1.payload.count) }
        #expect(try await store.totalSize() == expectedTotal)
        #expect(expectedTotal > validTotal)  // The corrupt files count too (the truncated one as 15 bytes).
        let lockedTotal = fixture.valid.filter(\.locked).reduce(Int64(0)) { $0 + Int64(64 + $1.key.utf8.count + $1.payload.count) }
        #expect(try await store.lockedSize() == lockedTotal)
        #expect(lockedTotal > 0)
    }

    @Test func expirationWithDefaultTimeout() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 601)
        let expected = fixture.valid.map { $0.locked || $0.ttlSeconds > 601 }
        #expect(try await loads(store, fixture.valid) == expected)
    }

    @Test func expirationWithTTL() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 86401)
        #expect(try await loads(store, fixture.valid) == fixture.valid.map { $0.locked })
    }

    @Test func touchSlidesOnlyDefaultExpiry() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 500)
        for entry in fixture.valid { #expect(try await store.touch(entry.key)) }
        clock.advance(seconds: 1000)  // 1500 s after the store, 1000 s after the touch.
        // ttl 0: the touch at 500 s slid the expiry to 1100 s, so at 1500 s they have expired.
        // Absolute TTLs ignore the touch: 1495 has expired at 1500, 7200 and 86400 have not.
        let expected = fixture.valid.map { $0.locked || $0.ttlSeconds > 1500 }
        #expect(try await loads(store, fixture.valid) == expected)
        // A touch of a record that cannot be returned reports false.
        let expired = try #require(fixture.valid.first { !$0.locked && $0.ttlSeconds == 0 })
        #expect(try await !store.touch(expired.key))
        #expect(try await !store.touch("missing"))
    }

    @Test func touchKeepsASlidingRecordAlive() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "sliding")
        for _ in 0..<5 {
            clock.advance(seconds: 590)
            #expect(try await store.touch("sliding"))
        }
        clock.advance(seconds: 601)
        #expect(try await store.load("sliding") == nil)
    }

    @Test func regularGarbageCollectionWithTTL() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        clock.advance(seconds: 86400)
        let report = try await store.collectGarbage()
        // Strict comparison: the 86400 s record is still fresh at exactly 86400 s.
        let survivors = fixture.valid.filter { $0.locked || $0.ttlSeconds >= 86400 }
        // The payload-corrupt record is a ttl-0 unlocked one whose header is valid: it goes as expired.
        #expect(report.expired == fixture.headerValid.count - survivors.count)
        #expect(report.corrupt == fixture.headerCorrupt.count)
        #expect(try store.filesOnDisk().count == survivors.count)
        #expect(try await loads(store, fixture.valid) == fixture.valid.map { $0.locked || $0.ttlSeconds >= 86400 })
    }

    @Test func serialStoreWithLockDoesNotIncrementTheLockCount() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "k", ttl: .seconds(1), locked: true)
        try await store.store([2], forKey: "k", ttl: .seconds(1), locked: true)
        #expect(try store.rawHeader(of: "k").lockCount == 1)
        try await store.store([3], forKey: "k", locked: false)
        let header = try store.rawHeader(of: "k")
        #expect(header.lockCount == 0 && header.ttlNanoseconds == 0)
    }

    @Test func anExpiredLockedRecordCanBeLockedAgain() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "locked", locked: true)
        try await store.store([1], forKey: "unlocked")
        clock.advance(seconds: 700)
        #expect(try await store.lock("locked") == 2)  // The ancestor said "not found".
        #expect(try await store.lock("unlocked") == nil)
    }

    @Test(arguments: [
        "a/b/../c", "with spaces and\ttabs", "ünïcødé/ключ/鍵", ".", "..", "/",
        String(repeating: "ten KiB of text, with / and spaces. ", count: 10 * 1024 / 36 + 1),
    ])
    func awkwardKeysWork(key: String) async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store(Array(key.utf8.prefix(100)), forKey: key)
        #expect(try await store.load(key)?.data == Array(key.utf8.prefix(100)))
        #expect(try await store.load(key)?.key == key)
        // File names are hashes of keys, never the keys.
        let names = try store.filesOnDisk()
        #expect(names.count == 1 && names[0].count == 64 && names[0].allSatisfy(\.isHexDigit))
        #expect(try await store.lock(key) == 1)
        #expect(try await store.remove([key]) == 1)
    }

    @Test func invalidKeysAndTTLsAreErrors() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        await #expect(throws: CacheError(key: "", operation: .store, reason: .invalidKey)) { try await store.store([], forKey: "") }
        let huge = String(repeating: "k", count: 64 * 1024 + 1)
        await #expect(throws: CacheError(key: huge, operation: .load, reason: .invalidKey)) { try await store.load(huge) }
        await #expect(throws: CacheError(key: "k", operation: .store, reason: .invalidTTL)) {
            try await store.store([], forKey: "k", ttl: .seconds(-1))
        }
    }

    @Test func aDeletedDirectoryReadsAsEmptyAndIsRecreated() async throws {
        defer { directory.remove() }
        let store = try await makeStore()
        try FileManager.default.removeItem(atPath: directory.path)
        #expect(try await loads(store, fixture.valid).allSatisfy { !$0 })
        #expect(try await store.totalSize() == 0)
        try await store.store([7], forKey: "again")
        #expect(try await store.load("again")?.data == [7])
    }

    /// A record file the store may read but not write (mode 0444; for root, which ignores modes, the immutable
    /// flag) still loads: the load falls back to a read-only descriptor, and only the access time cannot move.
    @Test func anAccessTimeWriteFailureStillReturnsTheRecord() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1, 2], forKey: "read-only")
        let path = store.path(of: "read-only")
        if getuid() == 0 {
            let status = CCourierTestSupport_setImmutable(path, 1)
            try #require(status == 0, "cannot set the immutable flag (errno \(status)): the read-only path is untested")
        } else {
            chmod(path, 0o444)
        }
        defer { _ = CCourierTestSupport_setImmutable(path, 0) }
        clock.advance(seconds: 1)
        #expect(try await store.load("read-only")?.data == [1, 2])
        #expect(store.statistics.accessTimeWriteFailures == 1)
        #expect(try store.rawHeader(of: "read-only").accessTime == testEpoch)
    }
}

/// What a prefix chooser was offered.
final class Offered: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func set(_ keys: [String]) { lock.withLock { stored = keys } }
    var keys: [String] { lock.withLock { stored } }
}
