import CourierCore
import CourierCrypto
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCache

/// The kept-open lock files (``StripeLocks``) and the stripe directories the store no longer `mkdir`s before
/// every write: whatever is deleted behind the store's back is created again, and a kept descriptor never
/// stops two holders from excluding each other.
@Suite(.onThreadsOfTheirOwn) struct StripeLocksTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    private func stripe(of key: String) -> Substring { SHA256.hex(SHA256.hash(Array(key.utf8))).prefix(2) }

    /// Whether a store operation on `key` that may not wait finds the stripe taken (another holder excludes it).
    private func isExcluded(_ store: RecordStore, _ key: String) -> Bool {
        LockWaiting.$allowed.withValue(false) {
            do throws(CacheError) {
                try store.storeNow([9], forKey: key, ttl: .zero, locked: false)
                return false
            } catch {
                return LockWaiting.isContention(error)
            }
        }
    }

    /// Holds `key`'s stripe lock through a descriptor of the test's own, as another process would, while `body`
    /// runs.
    private func holdingStripe(of key: String, _ body: () throws -> Void) throws {
        let fd = open(directory.path + "/locks/\(stripe(of: key)).lock", O_RDWR | O_CREAT, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        try body()
    }

    @Test func aStripeDirectoryDeletedBehindTheStoresBackIsCreatedAgain() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1, 2, 3], forKey: "first")
        let stripeDirectory = URL(fileURLWithPath: store.path(of: "first")).deletingLastPathComponent().path
        try FileManager.default.removeItem(atPath: stripeDirectory)
        #expect(try await store.load("first") == nil)
        try await store.store([4, 5, 6], forKey: "first")
        #expect(try await store.load("first")?.data == [4, 5, 6])
    }

    /// The whole directory, lock files included, removed while the store keeps descriptors of the old lock files:
    /// the store works again, and it locks the new lock files (a lock on an unlinked file would exclude nobody).
    @Test func aDeletedStoreDirectoryIsCreatedAgainAndItsNewLockFilesAreTheOnesLocked() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "k")
        #expect(try await store.load("k") != nil)  // The stripe's descriptor is now kept.
        try FileManager.default.removeItem(atPath: directory.path)
        try await store.store([2], forKey: "k")
        #expect(try await store.load("k")?.data == [2])
        try holdingStripe(of: "k") { #expect(isExcluded(store, "k")) }
        #expect(!isExcluded(store, "k"))
    }

    /// `courier cache clear` wipes every record; the lock files and the kept descriptors stay, and still exclude.
    @Test func keptDescriptorsSurviveAWipeAndStillExclude() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        for index in 0..<50 { try await store.store([UInt8(index)], forKey: "key \(index)", locked: index.isMultiple(of: 2)) }
        #expect(try await store.wipeUnlocked() + store.wipeLocked() == 50)
        #expect(try store.filesOnDisk().isEmpty)
        for index in 0..<50 { try await store.store([UInt8(index)], forKey: "key \(index)") }
        for index in 0..<50 { #expect(try await store.load("key \(index)")?.data == [UInt8(index)]) }
        try holdingStripe(of: "key 7") { #expect(isExcluded(store, "key 7")) }
    }

    /// Two stores on one directory (two sets of kept descriptors, as two processes have) exclude each other.
    @Test func twoStoresWithKeptDescriptorsExcludeEachOther() async throws {
        defer { directory.remove() }
        let first = try RecordStore.forTest(directory, clock: clock)
        let second = try RecordStore.forTest(directory, clock: clock)
        try await first.store([1], forKey: "k")
        try await second.store([2], forKey: "k")
        try first.locks.withExclusiveLock(stripe(of: "k")) { () throws(SystemCallError) in
            #expect(isExcluded(second, "k"))
        }
        #expect(!isExcluded(second, "k"))
    }

    /// A forked child shares its parent's open file descriptions, and so their locks: were it to use the kept
    /// descriptors, its lock would not exclude the parent. The child takes the stripe's lock through the store
    /// (with the parent's idle descriptor inherited), and the parent's own attempt must find it taken.
    @Test func aForkedChildDoesNotShareTheParentsLocks() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store([1], forKey: "k")  // Leaves the stripe's descriptor idle, to be inherited.
        var toChild: [Int32] = [0, 0]
        var toParent: [Int32] = [0, 0]
        #expect(pipe(&toChild) == 0 && pipe(&toParent) == 0)
        let pid = fork()
        if pid == 0 {
            var byte: UInt8 = 0
            _ = try? store.locks.withExclusiveLock(stripe(of: "k")) { () throws(SystemCallError) in
                _ = write(toParent[1], &byte, 1)  // Locked.
                _ = read(toChild[0], &byte, 1)  // Until the parent has tried.
            }
            _exit(0)
        }
        #expect(pid > 0)
        var byte: UInt8 = 0
        #expect(read(toParent[0], &byte, 1) == 1)
        let excluded = isExcluded(store, "k")
        _ = write(toChild[1], &byte, 1)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        for fd in toChild + toParent { close(fd) }
        #expect(excluded, "the child's lock did not exclude the parent")
        #expect(!isExcluded(store, "k"))
    }
}
