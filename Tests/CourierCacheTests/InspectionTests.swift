import CourierTestSupport
import Foundation
import Testing

@testable import CourierCache

/// `inspectAll` and `inspect` report and never change a record file: no access time moves, no corrupt file is
/// removed. (They take the stripes' locks like every operation, which may create an empty lock file.)
@Suite(.onThreadsOfTheirOwn) struct InspectionTests {
    let directory: TemporaryDirectory
    let clock = ManualClock(testEpoch)

    init() throws { directory = try TemporaryDirectory() }

    @Test func inspectionReportsEveryFileAndChangesNothing() async throws {
        defer { directory.remove() }
        let store = try RecordStore.forTest(directory, clock: clock)
        try await store.store(Array(repeating: 1, count: 100), forKey: "fresh", ttl: .seconds(60))
        try await store.store(Array(repeating: 2, count: 100), forKey: "locked", locked: true)
        try await store.store(Array(repeating: 3, count: 100), forKey: "bad payload")
        try await store.store(Array(repeating: 4, count: 100), forKey: "bad header")
        try editFile(store.path(of: "bad payload")) { $0[$0.count - 1] ^= 0xFF }
        try editFile(store.path(of: "bad header")) { $0[0] = 0 }  // the magic
        clock.advance(seconds: 120)
        let before = try directory.snapshot()

        let quick = try await store.inspectAll()
        // A header scan cannot see the payload: three intact, one corrupt.
        #expect(quick.filter { if case .intact = $0 { true } else { false } }.count == 3)
        #expect(quick.contains(.corrupt(fileName: (store.path(of: "bad header") as NSString).lastPathComponent, .badMagic)))
        let whole = try await store.inspectAll(verifyingPayloads: true)
        #expect(whole.contains(.corrupt(fileName: (store.path(of: "bad payload") as NSString).lastPathComponent, .payloadChecksumMismatch)))
        guard case .intact(let fresh)? = try await store.inspect("fresh") else {
            Issue.record("fresh is not intact")
            return
        }
        #expect(fresh.isExpired)  // 60 s TTL, 120 s later
        #expect(fresh.expiryTime == testEpoch + 60_000_000_000)
        #expect(fresh.accessTime == testEpoch)
        guard case .intact(let locked)? = try await store.inspect("locked") else {
            Issue.record("locked is not intact")
            return
        }
        #expect(locked.lockCount == 1 && locked.ttl == .zero)
        #expect(try await store.inspect("missing") == nil)

        let after = try directory.snapshot()
        let changed = Set(after.keys).symmetricDifference(before.keys).union(before.keys.filter { after[$0] != nil && after[$0] != before[$0] })
        #expect(changed.isEmpty, "inspection changed \(changed.sorted())")
        #expect(store.statistics.corruptRecordsRemoved == 0)
    }
}

extension TemporaryDirectory {
    /// Every file under the directory with its bytes, but the empty lock files the stripes' locks live in.
    func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = path + "/" + relative
            if !relative.hasPrefix("locks/"), FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: full))
            }
        }
        return files
    }
}
