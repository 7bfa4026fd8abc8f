import CourierTestSupport
import Foundation
import Testing

@testable import CourierCache

@Suite(.onThreadsOfTheirOwn) struct GarbageCollectionTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    /// The ancestor's testPruneWithSizeRestriction, made to constrain something (its expected size underflowed
    /// to a huge cap): records are used one nanosecond apart in a seeded order, the cap forces four out, and
    /// exactly the four least recently used unlocked records go, although the locked ones are older still.
    @Test func sizeEvictionIsLRUToTheNanosecondAndSparesLockedRecords() async throws {
        defer { directory.remove() }
        let payload = [UInt8](repeating: 1, count: 1000)
        let recordSize = Int64(64 + "record-00".utf8.count + payload.count)
        // Filled without a cap (a capped store keeps within it as it stores); collected by a capped one.
        let writer = try RecordStore.forTest(directory, clock: clock)
        let store = try RecordStore.forTest(directory, clock: clock) { $0.sizeCap = recordSize * 8 }
        let keys = (0..<12).map { "record-" + ($0 < 10 ? "0\($0)" : "\($0)") }
        for (index, key) in keys.enumerated() { try await writer.store(payload, forKey: key, locked: index < 2) }
        var generator = SeededGenerator(state: 2024)
        let order = Array(keys[2...]).shuffled(using: &generator)
        for key in order {
            clock.advance(nanoseconds: 1)
            #expect(try await store.touch(key))
        }
        let report = try await store.collectGarbage()
        #expect(report.evicted == 4 && report.bytesFreed == 4 * recordSize)
        let survivors = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for key in keys { group.addTask { (key, try await store.load(key) != nil) } }
            return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        let evicted = Set(order.prefix(4))
        for key in keys { #expect(survivors[key] == !evicted.contains(key), "\(key)") }
        #expect(try await store.totalSize() == 8 * recordSize)
    }

    /// A record whose header is sound and whose payload is not: a header scan cannot see it; a verifying scan
    /// removes it (locked or not) and counts it, and leaves the sound records alone.
    @Test func aVerifyingCollectionFindsCorruptPayloadsThatAHeaderScanCannotSee() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        for key in ["sound", "rotten", "rotten-locked"] {
            try await store.store(Array(repeating: 7, count: 500), forKey: key, locked: key.hasSuffix("locked"))
        }
        for key in ["rotten", "rotten-locked"] {
            try editFile(store.path(of: key)) { bytes in bytes[bytes.count - 10] ^= 0xFF }  // one payload byte
        }
        let headersOnly = try await store.collectGarbage()
        #expect(headersOnly.corrupt == 0)
        #expect(FileManager.default.fileExists(atPath: store.path(of: "rotten")))
        let verifying = try await store.collectGarbage(verifyingPayloads: true)
        #expect(verifying.corrupt == 2)
        #expect(!FileManager.default.fileExists(atPath: store.path(of: "rotten")))
        #expect(!FileManager.default.fileExists(atPath: store.path(of: "rotten-locked")))
        #expect(try await store.load("sound")?.data == Array(repeating: 7, count: 500))
        #expect(store.statistics.corruptRecordsRemoved == 2)
    }

    @Test func lockedRecordsSurviveEvenWhenTheyAloneExceedTheCap() async throws {
        defer { directory.remove() }
        let writer = try RecordStore.forTest(directory, clock: clock)
        let store = try RecordStore.forTest(directory, clock: clock) { $0.sizeCap = 100 }
        for index in 0..<5 { try await writer.store(Array(repeating: 2, count: 500), forKey: "locked \(index)", locked: true) }
        for index in 0..<5 { try await writer.store(Array(repeating: 3, count: 500), forKey: "free \(index)") }
        let report = try await store.collectGarbage()
        #expect(report.evicted == 5)
        for index in 0..<5 { #expect(try await store.load("locked \(index)") != nil) }
        #expect(try await store.lockedSize() == store.totalSize())
    }

    @Test func noCapMeansNoEviction() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        for index in 0..<5 { try await store.store(Array(repeating: 3, count: 500), forKey: "free \(index)") }
        #expect(try await store.collectGarbage() == GarbageCollectionReport())
        #expect(try store.filesOnDisk().count == 5)
    }

    @Test func theBackgroundScheduleRunsOnAPlainTaskAndStops() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "stale")
        try await store.store([2], forKey: "kept", locked: true)
        clock.advance(seconds: 601)
        store.startCollectingGarbage(every: .milliseconds(10))
        store.startCollectingGarbage(every: .milliseconds(10))  // Idempotent: replaces, does not add.
        #expect(store.isCollectingGarbage)
        let stalePath = store.path(of: "stale")
        let deadline = ContinuousClock.now + .seconds(10)
        while FileManager.default.fileExists(atPath: stalePath) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(!FileManager.default.fileExists(atPath: stalePath))
        #expect(FileManager.default.fileExists(atPath: store.path(of: "kept")))
        await store.stopCollectingGarbage()
        #expect(!store.isCollectingGarbage)
        // Stopped: an expired record stays until the next explicit run.
        try await store.store([3], forKey: "later")
        clock.advance(seconds: 601)
        try await Task.sleep(for: .milliseconds(100))
        #expect(FileManager.default.fileExists(atPath: store.path(of: "later")))
        #expect(try await store.collectGarbage().expired == 1)
        #expect(store.statistics.backgroundFailures == 0)
    }

    /// A collection over many stripes on eight threads removes exactly what one thread does: the same temporary,
    /// expired and corrupt files, the same least recently used records, never a locked one.
    @Test func aCollectionOnManyThreadsRemovesExactlyWhatOneThreadRemoves() async throws {
        let other = try TemporaryDirectory()
        defer { directory.remove(); other.remove() }
        let payload = [UInt8](repeating: 5, count: 100)
        var results: [(GarbageCollectionReport, [String])] = []
        for (dir, threads) in [(directory, 1), (other, 8)] {
            let clock = ManualClock(testEpoch)
            let writer = try RecordStore.forTest(dir, clock: clock)
            let store = try RecordStore.forTest(dir, clock: clock) {
                $0.sizeCap = 150 * (64 + 8 + 100)
                $0.collectionThreads = threads
            }
            var generator = SeededGenerator(state: 77)
            for index in (0..<600).shuffled(using: &generator) {
                clock.advance(nanoseconds: 1)
                let key = "key \(1000 + index)"
                try await writer.store(payload, forKey: key, ttl: index % 5 == 0 ? .seconds(10) : .zero, locked: index % 7 == 0)
            }
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: store.path(of: "key 1001") + ".tmp"))
            try editFile(store.path(of: "key 1002")) { bytes in bytes[5] ^= 0xFF }
            clock.advance(seconds: 11)
            let report = try await store.collectGarbage()
            results.append((report, try store.filesOnDisk()))
            // Locked records are all still there, whatever their expiry and the cap.
            for index in stride(from: 0, to: 600, by: 7) { #expect(try await store.load("key \(1000 + index)") != nil) }
        }
        #expect(results[0].0 == results[1].0)
        #expect(results[0].1 == results[1].1)
        #expect(results[1].0.temporaryFiles == 1 && results[1].0.corrupt == 1)
        #expect(results[1].0.expired == 120 - 18)  // Every fifth expired, less those also locked (every 35th).
        #expect(results[1].1.count == 150)
    }

    /// Records locked while a many-threaded collection evicts are never removed: a lock that returned a count
    /// was taken under the stripe's lock, and eviction re-reads each victim's header under that lock.
    @Test func recordsLockedDuringAManyThreadedCollectionSurviveIt() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock) {
            $0.sizeCap = 1
            $0.collectionThreads = 8
        }
        let writer = try RecordStore.forTest(directory, clock: clock)
        let keys = (0..<400).map { "record \($0)" }
        for key in keys { try await writer.store([1, 2, 3], forKey: key) }
        let locked = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { _ = try await store.collectGarbage(); return nil }
            for key in keys where key.hasSuffix("3") {
                group.addTask { try await store.lock(key) != nil ? key : nil }
            }
            return try await group.reduce(into: [String]()) { if let key = $1 { $0.append(key) } }
        }
        for key in locked { #expect(try await store.load(key)?.lockCount == 1, "\(key)") }
        #expect(try store.filesOnDisk().count == locked.count)
    }
}
