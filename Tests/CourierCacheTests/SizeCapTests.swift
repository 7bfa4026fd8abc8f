import CourierTestSupport
import Foundation
import Testing

@testable import CourierCache

/// The size cap as a bound kept by every store, not only by the next garbage collection (issue 23).
@Suite(.onThreadsOfTheirOwn) struct SizeCapTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    /// The bytes of the record files on disk now, listed by the test (not by the store's own accounting).
    func bytesOnDisk() throws -> Int64 {
        let manager = FileManager.default
        return try manager.contentsOfDirectory(atPath: directory.path).filter { $0.count == 2 }.reduce(0) { total, stripe in
            try manager.contentsOfDirectory(atPath: directory.path + "/" + stripe).reduce(total) { total, name in
                let attributes = try manager.attributesOfItem(atPath: directory.path + "/" + stripe + "/" + name)
                return total + ((attributes[.size] as? NSNumber)?.int64Value ?? 0)
            }
        }
    }

    /// Two stores on one directory stand for two processes: each store's own writes alone never reach the cap,
    /// so only a total both keep can hold it. After every store the directory is within the cap plus one
    /// record, and what goes is the least recently used: a record touched after every store survives them all.
    @Test func everyStoreKeepsTheSharedDirectoryWithinTheCapLeastRecentlyUsedFirst() async throws {
        defer { directory.remove() }
        let payload = [UInt8](repeating: 3, count: 1000)
        let recordSize = Int64(64 + "key-00".utf8.count + payload.count)
        let cap = recordSize * 6
        let first = try RecordStore.forTest(directory, clock: clock) { $0.sizeCap = cap }
        let second = try RecordStore.forTest(directory, clock: clock) { $0.sizeCap = cap }
        let keys = (0..<24).map { $0 < 10 ? "key-0\($0)" : "key-\($0)" }
        for (index, key) in keys.enumerated() {
            clock.advance(seconds: 1)
            try await (index.isMultiple(of: 2) ? first : second).store(payload, forKey: key)
            if index > 1 {
                clock.advance(seconds: 1)
                #expect(try await (index.isMultiple(of: 2) ? second : first).touch("key-01"), "key-01 evicted at \(key)")
            }
            let onDisk = try bytesOnDisk()
            #expect(onDisk <= cap + recordSize, "\(onDisk) bytes after \(key)")
        }
        for key in ["key-01", "key-23", "key-22", "key-21"] { #expect(try await first.load(key) != nil, "\(key)") }
        for key in ["key-00", "key-02", "key-10"] { #expect(try await second.load(key) == nil, "\(key)") }
    }

    /// Replacements and removes are accounted exactly: the shared total follows the bytes on disk without a
    /// collection to correct it, so a store that rewrites and removes never finds itself over the cap.
    @Test func replacingAndRemovingDoNotCountAsGrowth() async throws {
        defer { directory.remove() }
        let payload = [UInt8](repeating: 4, count: 1000)
        let recordSize = Int64(64 + "key-00".utf8.count + payload.count)
        let store = try RecordStore.forTest(directory, clock: clock) { $0.sizeCap = recordSize * 4 }
        for key in ["key-00", "key-01", "key-02"] { try await store.store(payload, forKey: key) }
        for _ in 0..<20 {
            clock.advance(seconds: 1)
            try await store.store(payload, forKey: "key-02")
            try await store.store(payload, forKey: "key-03")
            #expect(try await store.remove(["key-03"]) == 1)
        }
        for key in ["key-00", "key-01", "key-02"] { #expect(try await store.load(key) != nil, "\(key)") }
        #expect(try bytesOnDisk() == 3 * recordSize)
        #expect(try SizeLedger(root: directory.path).total() == 3 * recordSize)
    }
}
