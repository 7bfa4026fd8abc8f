import CourierCore
import CourierCrypto
import CourierTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import CourierCache

@Suite(.onThreadsOfTheirOwn) struct ConcurrencyTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    /// The suite's stores run on the test executor's threads, child tasks included, so hundreds of file creations
    /// never hold the cooperative pool that every other suite's timers need (see `ThreadExecutor`).
    @Test func theSuiteRunsOnThreadsOfItsOwn() async {
        defer { directory.remove() }
        #expect(ThreadExecutor.shared.isCurrent)
        let onItsThreads = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { ThreadExecutor.shared.isCurrent } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(onItsThreads == [true, true, true, true])
    }

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

    /// Under `.durable`, stores, locks and unlocks go to threads of their own (their fsyncs block): many of them
    /// at once all land, with exact lock counts.
    @Test func durableStoresLocksAndUnlocksOfManyKeysAllLand() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock) { $0.fsync = .durable }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let key = "durable \(index)"
                    try await store.store(Array("value \(index)".utf8), forKey: key, locked: true)
                    #expect(try await store.lock(key) == 2)
                    #expect(try await store.unlock(key) == 1)
                }
            }
            try await group.waitForAll()
        }
        for index in 0..<16 { #expect(try await store.load("durable \(index)")?.data == Array("value \(index)".utf8)) }
        #expect(try await store.lockedSize() == store.totalSize())
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

/// Waiting for a stripe's lock never blocks Swift's cooperative pool: contended operations wait on Dispatch's
/// threads, so other async work goes on while another holder (here the test, through its own descriptor, as
/// another process would) keeps the lock.
@Suite struct LockWaitingTests {
    @Test func contendedOperationsLeaveTheCooperativePoolFree() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: ManualClock(testEpoch))
        try await store.store(Array("payload".utf8), forKey: "k")
        // Were the waits blocking the pool, the task that releases the lock could not run, and the test would fail
        // on time (the watchdog's 20 s), not hang.
        let (release, released) = try Self.holdStripeLock(of: "k", in: directory)
        // More waiting loads than the pool has threads: with a blocking flock they would hold them all.
        let finished = Flag()
        let count = ProcessInfo.processInfo.activeProcessorCount * 3
        let loads = Task {
            defer { finished.set() }
            return try await withThrowingTaskGroup(of: CacheRecord?.self) { group in
                for _ in 0..<count { group.addTask { try await store.load("k") } }
                return try await group.reduce(into: [CacheRecord?]()) { $0.append($1) }
            }
        }
        // Meanwhile other async work runs: twenty short sleeps, long before the watchdog would step in (a busy
        // suite can slow them down; a blocked pool stops them until the watchdog releases the lock).
        let started = ContinuousClock.now
        for _ in 0..<20 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(ContinuousClock.now - started < .seconds(15), "the pool was blocked")
        #expect(!released.isSet && !finished.isSet, "the loads finished while the lock was held")
        // Released: every waiting load completes and finds the record.
        release.signal()
        let records = try await loads.value
        #expect(records.count == count)
        #expect(records.allSatisfy { $0?.data == Array("payload".utf8) })
    }
}

extension LockWaitingTests {
    /// Holds `key`'s stripe lock from another open file description (flock locks conflict across them), as another
    /// process would. A watchdog thread releases it when `release` is signalled, or after 20 s at the latest, and
    /// then sets `released`.
    static func holdStripeLock(of key: String, in directory: TemporaryDirectory) throws -> (release: DispatchSemaphore, released: Flag) {
        let stripe = SHA256.hex(SHA256.hash(Array(key.utf8))).prefix(2)
        let fd = open(directory.path + "/locks/\(stripe).lock", O_RDWR)
        try #require(fd >= 0)
        try #require(flock(fd, LOCK_EX) == 0)
        let release = DispatchSemaphore(value: 0)
        let released = Flag()
        Thread {
            _ = release.wait(timeout: .now() + 20)
            flock(fd, LOCK_UN)
            close(fd)
            released.set()
        }.start()
        return (release, released)
    }

    /// Under a `CancellationScope` (a data loader's load runs on its caller's task under one), a wait for a lock
    /// held elsewhere ends when the scope is cancelled, with `cancelled`; the operation itself still runs to its
    /// end once the lock is free, so nothing is lost.
    @Test func aCancelledScopeStopsTheWaitButNotTheOperation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: ManualClock(testEpoch))
        try await store.store(Array("old".utf8), forKey: "k")
        let (release, released) = try Self.holdStripeLock(of: "k", in: directory)
        let scope = CancellationScope()
        let waiting = Task { () -> CacheError? in
            await CancellationScope.$current.withValue(scope) { () async -> CacheError? in
                do throws(CacheError) {
                    try await store.store(Array("new".utf8), forKey: "k")
                    return nil
                } catch {
                    return error
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        scope.cancel(with: CourierError(.cancelled, "the load was cancelled"))
        let error = await waiting.value
        #expect(ContinuousClock.now - start < .seconds(10), "the waiter was not released before the lock")
        #expect(!released.isSet, "the lock was released before the waiter resumed")
        #expect(error?.reason == .cancelled && error?.operation == .store && error?.key == "k")
        // Released: the store that nobody waits for any more still lands.
        release.signal()
        var stored: CacheRecord?
        for _ in 0..<200 {
            stored = try await store.load("k")
            if stored?.data == Array("new".utf8) { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(stored?.data == Array("new".utf8))
    }
}

/// A flag set once, read from any task.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
