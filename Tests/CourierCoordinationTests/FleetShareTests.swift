import CourierCoordination
import CourierCore
import Testing

@Suite struct FleetShareTests {
    @Test func theRateAndTheBurstAreDividedByTheLiveCountTheBurstRoundedUp() {
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        #expect(FleetShare.local(limit, liveInstances: 1) == limit)
        #expect(FleetShare.local(limit, liveInstances: 8) == RateLimit(requestsPerSecond: 6.25, burst: 2))
        #expect(FleetShare.local(limit, liveInstances: 5) == RateLimit(requestsPerSecond: 10, burst: 2))
        #expect(FleetShare.local(limit, liveInstances: 3).burst == 4)
        #expect(FleetShare.local(limit, liveInstances: 64) == RateLimit(requestsPerSecond: 50.0 / 64, burst: 1))
        #expect(FleetShare.local(RateLimit(requestsPerSecond: 20, burst: 20), liveInstances: 3).burst == 7)
    }

    @Test func aCountBelowOneIsOneAndTheBurstIsAtLeastOne() {
        let limit = RateLimit(requestsPerSecond: 20, burst: 4)
        #expect(FleetShare.local(limit, liveInstances: 0) == limit)
        #expect(FleetShare.local(limit, liveInstances: -3) == limit)
        #expect(FleetShare.local(RateLimit(requestsPerSecond: 20, burst: 0), liveInstances: 2).burst == 1)
        #expect(FleetShare.local(RateLimit(requestsPerSecond: 20, burst: -5), liveInstances: 2).burst == 1)
        // No overflow at the extremes.
        #expect(FleetShare.local(RateLimit(requestsPerSecond: 20, burst: .max), liveInstances: 2).burst == Int.max / 2 + 1)
        #expect(FleetShare.local(RateLimit(requestsPerSecond: 20, burst: 3), liveInstances: .max).burst == 1)
    }
}
