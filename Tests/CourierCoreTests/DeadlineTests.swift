import Testing

@testable import CourierCore

/// The one instant type below the public API: monotonic nanoseconds, saturating arithmetic, exact conversions at
/// the edge.
@Suite struct DeadlineTests {
    @Test func aClockInstantRoundTripsExactly() {
        let now = ContinuousClock.now
        for offset: Duration in [.zero, .nanoseconds(1), .seconds(-3), .seconds(86_400 * 365), .milliseconds(1234)] {
            let instant = now + offset
            #expect(Deadline(instant).instant == instant)
        }
    }

    @Test func arithmeticAndOrderMatchTheClocks() {
        let a = ContinuousClock.now
        let b = a + .milliseconds(250)
        let (x, y) = (Deadline(a), Deadline(b))
        #expect(y - x == .milliseconds(250))
        #expect(x - y == .milliseconds(-250))
        #expect(x < y && !(y < x) && x != y)
        #expect(x + .milliseconds(250) == y)
        #expect(y - .milliseconds(250) == x)
        var z = x
        z += .milliseconds(250)
        #expect(z == y && z.hashValue == y.hashValue)
        #expect((x + .seconds(1)).instant == a + .seconds(1))
    }

    @Test func arithmeticSaturatesInsteadOfTrapping() {
        #expect(Deadline.distantFuture + .seconds(1) == .distantFuture)
        #expect(Deadline(nanoseconds: 5) - .seconds(1) == Deadline(nanoseconds: 0))
        #expect(Deadline(nanoseconds: 5) + .seconds(-1) == Deadline(nanoseconds: 0))
        #expect(Deadline(nanoseconds: 0) - Deadline.distantFuture == .nanoseconds(Int64.min + 1) || Deadline(nanoseconds: 0) - Deadline.distantFuture < .zero)
    }

    @Test func nowIsTheMonotonicClocksNowAndAgreesWithTheContinuousClock() {
        let before = ContinuousClock.now
        let now = Deadline.now()
        let after = ContinuousClock.now
        // Two clocks read through one anchor: within a millisecond of each other over a test's lifetime.
        #expect(before - .milliseconds(1) <= now.instant && now.instant <= after + .milliseconds(1))
        #expect(Deadline.now() >= now)
    }
}
