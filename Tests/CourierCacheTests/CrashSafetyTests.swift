import CourierCore
import Foundation
import Synchronization
import CourierTestSupport
import Testing

@testable import CourierCache

@Suite(.onThreadsOfTheirOwn) struct CrashSafetyTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    @Test func aWriterKilledAtAnyByteLeavesTheOldRecord() async throws {
        defer { directory.remove() }
        let old: [UInt8] = Array(repeating: 0xAA, count: 300)
        let new: [UInt8] = Array(repeating: 0xBB, count: 300)
        let crashAt = Mutex<Int?>(nil)
        let store = try RecordStore.forTest(directory, clock: clock) {
            $0.writeFault = { _ in crashAt.withLock { $0 }.map { WriteFault(afterBytes: $0, kind: .crash) } }
        }
        try await store.store(old, forKey: "k")
        let fileSize = 64 + 1 + new.count
        for offset in 0..<fileSize {
            crashAt.withLock { $0 = offset }
            await #expect(throws: CacheError.self) { try await store.store(new, forKey: "k", ttl: .seconds(5)) }
            crashAt.withLock { $0 = nil }
            // What `kill -9` leaves: the old record in place and a partial temporary file beside it.
            #expect(try await store.load("k")?.data == old, "crash after \(offset) bytes")
            #expect(FileManager.default.fileExists(atPath: store.path(of: "k") + ".tmp"))
        }
        let report = try await store.collectGarbage()
        #expect(report.temporaryFiles == 1 && report.corrupt == 0)
        #expect(try store.filesOnDisk().count == 1)
        try await store.store(new, forKey: "k")
        #expect(try await store.load("k")?.data == new)
    }

    @Test func aFailedWriteKeepsTheOldRecordAndRemovesTheTemporaryFile() async throws {
        defer { directory.remove() }
        let fail = Mutex(false)
        let store = try RecordStore.forTest(directory, clock: clock) {
            $0.writeFault = { _ in fail.withLock { $0 } ? WriteFault(afterBytes: 100, kind: .fail(errno: ENOSPC)) : nil }
        }
        try await store.store([1, 2, 3], forKey: "full disk", locked: true)
        fail.withLock { $0 = true }
        await #expect(throws: CacheError(key: "full disk", operation: .store, reason: .system(SystemCallError(call: "write", errno: ENOSPC)))) {
            try await store.store(Array(repeating: 9, count: 1000), forKey: "full disk")
        }
        let record = try #require(try await store.load("full disk"))
        #expect(record.data == [1, 2, 3] && record.lockCount == 1)
        #expect(try store.filesOnDisk().count == 1)
    }

    /// A switch a test flips while its store runs.
    final class Switch: Sendable {
        private let state = Mutex(false)
        var isOn: Bool { state.withLock { $0 } }
        func set(_ on: Bool) { state.withLock { $0 = on } }
    }

    /// A `.durable` store whose file `fsync`s fail with `EIO` while the returned switch is on.
    func durableStoreWithFailingSync() throws -> (RecordStore, Switch) {
        let failSync = Switch()
        let store = try RecordStore.forTest(directory, clock: clock) {
            $0.fsync = .durable
            $0.writeFault = { _ in failSync.isOn ? WriteFault(afterBytes: 0, kind: .failSync(errno: EIO)) : nil }
        }
        return (store, failSync)
    }

    /// A `.durable` store syncs a replacement before it renames it over the old record: when that `fsync`
    /// fails (`EIO`), the old record is still the one under the key, and no temporary file is left. (Renaming
    /// first, as a new key's store does, fails this test.)
    @Test func aFailedSyncOfAReplacementKeepsTheOldRecord() async throws {
        defer { directory.remove() }
        let (store, failSync) = try durableStoreWithFailingSync()
        try await store.store([1, 2, 3], forKey: "replaced", locked: true)
        failSync.set(true)
        await #expect(throws: CacheError(key: "replaced", operation: .store, reason: .system(SystemCallError(call: "fsync", errno: EIO)))) {
            try await store.store(Array(repeating: 7, count: 5000), forKey: "replaced")
        }
        let record = try #require(try await store.load("replaced"))
        #expect(record.data == [1, 2, 3] && record.lockCount == 1)
        #expect(try store.filesOnDisk().count == 1)
    }

    /// A `.durable` store of a new key renames first (`RENAME_NOREPLACE`) and syncs after, one journal commit
    /// instead of two; when that `fsync` fails the new file is taken back: the key reads as missing, as it did
    /// before the call, and nothing is left in the directory.
    @Test func aFailedSyncOfANewKeyLeavesTheKeyMissing() async throws {
        defer { directory.remove() }
        let (store, failSync) = try durableStoreWithFailingSync()
        try await store.store([9], forKey: "other")
        failSync.set(true)
        await #expect(throws: CacheError(key: "new", operation: .store, reason: .system(SystemCallError(call: "fsync", errno: EIO)))) {
            try await store.store(Array(repeating: 7, count: 5000), forKey: "new")
        }
        #expect(try await store.load("new") == nil)
        #expect(try store.filesOnDisk().count == 1)
        failSync.set(false)
        // Both orders publish whole records that read back.
        try await store.store([4, 5], forKey: "new")
        try await store.store([6], forKey: "new")
        #expect(try await store.load("new")?.data == [6])
        #expect(try await store.load("other")?.data == [9])
    }

    /// A child process stores 2 MiB records in a loop and is killed with SIGKILL at a seeded random moment,
    /// thirty times. The file under the key must always decode completely (old or new generation, never torn).
    @Test func sigkillMidWriteNeverLeavesATornRecord() async throws {
        directory.remove()
        // The writers store about a gigabyte in all: in memory, not on the disk other tests use.
        let directory = try TemporaryDirectory.inMemory()
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        let key = "killed writer"
        @Sendable func payload(_ generation: UInt64) -> [UInt8] {
            var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: generation), count: 2 << 20)
            withUnsafeBytes(of: generation.littleEndian) { for (index, byte) in $0.enumerated() { bytes[index] = byte } }
            return bytes
        }
        try store.storeNow(payload(0), forKey: key, ttl: .zero, locked: false)
        // Thirty forks, kills and 2 MiB comparisons take seconds in a debug build: off the cooperative pool.
        let path = store.path(of: key)
        let rounds = await offThePool { () -> [KillRound] in
            var generator = SeededGenerator(state: 9)
            var newestGeneration = UInt64(0)
            var rounds: [KillRound] = []
            for _ in 0..<30 {
                let start = newestGeneration + 1
                let pid = fork()
                if pid == 0 {
                    // The child: only this thread exists; it writes through the store's own synchronous path.
                    var generation = start
                    while true {
                        _ = try? store.storeNow(payload(generation), forKey: key, ttl: .zero, locked: false)
                        generation += 1
                    }
                }
                guard pid > 0 else { return rounds }
                usleep(UInt32.random(in: 1_000...40_000, using: &generator))
                kill(pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                var round = KillRound(killed: status & 0x7F == SIGKILL)
                round.temporaryFileLeft = FileManager.default.fileExists(atPath: path + ".tmp")
                if let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path))),
                    case .success(let header) = RecordHeader.decodeRecord(bytes)  // Never torn.
                {
                    let data = Array(bytes[header.headerSize...])
                    let generation = data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    round.generation = generation
                    round.intact = data == payload(generation)
                    newestGeneration = max(newestGeneration, generation)
                }
                rounds.append(round)
            }
            return rounds
        }
        #expect(rounds.allSatisfy { $0.killed })
        #expect(rounds.allSatisfy { $0.intact }, "\(rounds.filter { !$0.intact })")
        let recordsSeen = rounds.filter(\.intact).count
        let newestGeneration = rounds.compactMap(\.generation).max() ?? 0
        let temporaryFilesSeen = rounds.filter(\.temporaryFileLeft).count
        #expect(recordsSeen == 30)
        // The kills landed both between and inside writes: the children made progress and were caught mid-write.
        #expect(newestGeneration > 0)
        #expect(temporaryFilesSeen > 0)
        // The kernel released the dead writers' flocks: the parent's own operations go through.
        #expect(try await store.load(key) != nil)
        #expect(try await store.collectGarbage().corrupt == 0)
    }
}

/// What one kill of ``CrashSafetyTests/sigkillMidWriteNeverLeavesATornRecord()``'s writer left behind.
struct KillRound: Sendable {
    var killed: Bool
    var temporaryFileLeft = false
    /// The generation the record under the key holds, nil when it did not read or decode.
    var generation: UInt64?
    /// Whether the record decoded and its payload is exactly its generation's.
    var intact = false
}
