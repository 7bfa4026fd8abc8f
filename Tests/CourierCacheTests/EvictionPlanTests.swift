import Testing

@testable import CourierCache

@Suite struct EvictionPlanTests {
    /// A file system so large that only the cap matters.
    let roomy = FileSystemSpace(totalBytes: 1 << 40, freeBytes: 1 << 39)

    @Test func evictsLeastRecentlyUsedFirstToTheNanosecond() {
        // The ancestor's `tv_sec + tv_nsec * 1e9` ranks `a` (1 s + 999 999 999 ns) after `b` (2 s + 1 ns).
        let a = EvictionCandidate(name: "a", size: 10, accessTime: 1_999_999_999)
        let b = EvictionCandidate(name: "b", size: 10, accessTime: 2_000_000_001)
        let c = EvictionCandidate(name: "c", size: 10, accessTime: 2_000_000_000)
        let victims = EvictionPlan.victims(
            candidates: [b, c, a], lockedBytes: 0, sizeCap: 15, space: roomy, minimumFreeFraction: 0.1
        )
        #expect(victims == [a, c])
    }

    @Test func tiesAreBrokenByNameSoThePlanIsDeterministic() {
        let x = EvictionCandidate(name: "x", size: 10, accessTime: 5)
        let y = EvictionCandidate(name: "y", size: 10, accessTime: 5)
        #expect(EvictionPlan.victims(candidates: [y, x], lockedBytes: 0, sizeCap: 10, space: roomy, minimumFreeFraction: 0.1) == [x])
    }

    @Test func lockedBytesCountButAreNeverFreed() {
        let candidates = (0..<4).map { EvictionCandidate(name: "r\($0)", size: 100, accessTime: Int64($0)) }
        // 400 unlocked + 250 locked against a cap of 500: two oldest go.
        #expect(
            EvictionPlan.victims(candidates: candidates, lockedBytes: 250, sizeCap: 500, space: roomy, minimumFreeFraction: 0.1)
                .map(\.name) == ["r0", "r1"]
        )
        // Locked records alone over the cap: every unlocked one goes, and the plan stops there.
        #expect(
            EvictionPlan.victims(candidates: candidates, lockedBytes: 900, sizeCap: 500, space: roomy, minimumFreeFraction: 0.1)
                .count == 4
        )
    }

    @Test func keepsTheLastTenPercentOfTheFileSystemFree() {
        // 1000-byte file system, 150 free, store uses 200: it may use 150 + 200 − 100 = 250 under a huge cap.
        let small = FileSystemSpace(totalBytes: 1000, freeBytes: 150)
        #expect(EvictionPlan.targetBytes(usedBytes: 200, sizeCap: .max, space: small, minimumFreeFraction: 0.1) == 250)
        // 20 free, store uses 100: 100 + 20 − 100 = 20, so 80 bytes go.
        let full = FileSystemSpace(totalBytes: 1000, freeBytes: 20)
        let candidates = (0..<10).map { EvictionCandidate(name: "r\($0)", size: 10, accessTime: Int64($0)) }
        let victims = EvictionPlan.victims(candidates: candidates, lockedBytes: 0, sizeCap: .max, space: full, minimumFreeFraction: 0.1)
        #expect(victims.map(\.name) == (0..<8).map { "r\($0)" })
    }

    @Test func targetIsTheCapWhenTheFileSystemIsRoomyAndZeroWhenItIsFull() {
        // The ancestor's testOptimizedDiskSizeForCacheSizeInsanelyBig / …Small.
        #expect(EvictionPlan.targetBytes(usedBytes: 0, sizeCap: 1 << 20, space: roomy, minimumFreeFraction: 0.1) == 1 << 20)
        let full = FileSystemSpace(totalBytes: 1000, freeBytes: 0)
        #expect(EvictionPlan.targetBytes(usedBytes: 50, sizeCap: 1 << 20, space: full, minimumFreeFraction: 0.1) == 0)
    }
}
