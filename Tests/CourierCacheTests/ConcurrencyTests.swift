import Foundation
import Testing

@testable import CourierCache

@Suite struct ConcurrencyTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    /// SPTPersistentCache lost lock counts when loads (which rewrote the file with the count they had read)
    /// raced locks and unlocks. Here 300 operations race on one key through two stores on one directory (each
    /// has its own lock-file descriptors, as two processes would) and the count is exact.
    @Test func lockUnlockAndLoadOnOneKeyLoseNothing() async throws {
        defer { directory.remove() }
        let first = try RecordStore.forTest(directory, clock: clock)
        let second = try RecordStore.forTest(directory, clock: clock)
        let payload = Array(repeating: UInt8(7), count: 4096)
        try await first.store(payload, forKey: "shared")
        await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { _ = try await (index.isMultiple(of: 2) ? first : second).lock("shared") }
            }
        }
        #expect(try first.rawHeader(of: "shared").lockCount == 100)
        let loaded = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<300 {
                let store = index.isMultiple(of: 2) ? first : second
                group.addTask {
                    clock.advance(nanoseconds: 1)
                    switch index % 3 {
                    case 0: return try await store.lock("shared") != nil
                    case 1: return try await store.unlock("shared") != nil
                    default: return try await store.load("shared")?.data == payload
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(loaded == 300)
        #expect(try first.rawHeader(of: "shared").lockCount == 100)
        #expect(first.statistics.corruptRecordsRemoved == 0 && second.statistics.corruptRecordsRemoved == 0)
    }

    /// Sustained contention: eight tasks (on as many threads as the pool has) each lock the same key 250 times
    /// while loads move its access time. Without the stripe lock this loses updates on every run tried.
    @Test func sustainedLockContentionIsExact() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1, 2, 3], forKey: "hot")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for _ in 0..<250 {
                        if worker == 0 { _ = try await store.load("hot") } else { _ = try await store.lock("hot") }
                        clock.advance(nanoseconds: 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.rawHeader(of: "hot").lockCount == 7 * 250)
    }

    @Test func storesAndLoadsOfManyKeysInParallelAllLand() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let key = "key \(index)"
                    try await store.store(Array("value \(index)".utf8), forKey: key, locked: index.isMultiple(of: 5))
                    #expect(try await store.load(key)?.data == Array("value \(index)".utf8))
                    if index.isMultiple(of: 5) { #expect(try await store.unlock(key) == 0) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.filesOnDisk().count == 200)
        #expect(try await store.lockedSize() == 0)
    }

    /// Stores racing one key leave one complete record, never a mixture.
    @Test func racingStoresOfOneKeyLeaveOneWholeRecord() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        let payloads = (0..<20).map { Array(repeating: UInt8($0), count: 64 * 1024) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for payload in payloads {
                group.addTask { try await store.store(payload, forKey: "contended") }
                group.addTask { _ = try await store.load("contended") }
            }
            try await group.waitForAll()
        }
        let record = try #require(try await store.load("contended"))
        #expect(payloads.contains(record.data))
        #expect(try store.filesOnDisk() == [URL(fileURLWithPath: store.path(of: "contended")).lastPathComponent])
    }
}
