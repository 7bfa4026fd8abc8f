import Testing

@testable import CourierCache

@Suite struct ExpiryRuleTests {
    let rule = ExpiryRule(defaultExpiryNanoseconds: 600 * 1_000_000_000)

    func header(ttlSeconds: UInt64, locked: Bool = false, stored: Int64 = testEpoch, accessed: Int64 = testEpoch) -> RecordHeader {
        RecordHeader(
            lockCount: locked ? 1 : 0, ttlNanoseconds: ttlSeconds * 1_000_000_000, storeTime: stored, accessTime: accessed,
            payloadSize: 0, payloadCRC: 0, key: [0x6B]
        )
    }

    func at(_ seconds: Int64, plusNanoseconds: Int64 = 0) -> Int64 { testEpoch + seconds * 1_000_000_000 + plusNanoseconds }

    @Test func slidingExpiryCountsFromTheLastAccessAndIsStrict() {
        let sliding = header(ttlSeconds: 0, accessed: at(100))
        #expect(!rule.isExpired(sliding, now: at(700)))
        #expect(rule.isExpired(sliding, now: at(700, plusNanoseconds: 1)))
    }

    @Test func absoluteExpiryCountsFromTheStoreTimeWhateverTheAccess() {
        let absolute = header(ttlSeconds: 86400, accessed: at(86_000))
        #expect(!rule.isExpired(absolute, now: at(86400)))
        #expect(rule.isExpired(absolute, now: at(86401)))
    }

    @Test func aFutureTimeNeverExpiresAndExtremeTimesDoNotTrap() {
        #expect(!rule.isExpired(header(ttlSeconds: 0, accessed: .max), now: at(0)))
        #expect(rule.isExpired(header(ttlSeconds: 0, accessed: .min), now: .max))
        #expect(!rule.isExpired(header(ttlSeconds: .max / 1_000_000_000, stored: .min), now: .min))
    }

    @Test func lockedRecordsAreReturnedWhenExpired() {
        #expect(rule.canBeReturned(header(ttlSeconds: 0, locked: true), now: at(10_000)))
        #expect(!rule.canBeReturned(header(ttlSeconds: 0), now: at(10_000)))
    }
}
