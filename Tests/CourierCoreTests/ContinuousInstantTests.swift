import Testing

@testable import CourierCore

/// The fixed-size twin of `ContinuousClock.Instant` stands for the same instants, exactly.
@Suite struct ContinuousInstantTests {
    @Test func aClockInstantRoundTripsExactly() {
        let now = ContinuousClock.now
        for offset: Duration in [.zero, .nanoseconds(1), .seconds(-3), .seconds(86_400 * 365), .milliseconds(1234)] {
            let instant = now + offset
            #expect(ContinuousInstant(instant).instant == instant)
        }
    }

    @Test func arithmeticAndOrderMatchTheClocks() {
        let a = ContinuousClock.now
        let b = a + .milliseconds(250)
        let (x, y) = (ContinuousInstant(a), ContinuousInstant(b))
        #expect(y - x == .milliseconds(250))
        #expect(x < y && !(y < x) && x != y)
        #expect(x + .milliseconds(250) == y)
        #expect(y - .milliseconds(250) == x)
        var z = x
        z += .milliseconds(250)
        #expect(z == y && z.hashValue == y.hashValue)
        #expect((x + .seconds(1)).instant == a + .seconds(1))
    }

    @Test func nowIsTheClocksNow() {
        let before = ContinuousClock.now
        let now = ContinuousInstant.now
        let after = ContinuousClock.now
        #expect(before <= now.instant && now.instant <= after)
    }
}
