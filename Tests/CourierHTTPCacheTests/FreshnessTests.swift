import CourierCore
import Testing

@testable import CourierHTTPCache

/// Freshness lifetime (RFC 9111 §4.2.1, §4.2.2) and current age (§4.2.3), at fixed instants.
@Suite struct FreshnessTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT.
    static let t0 = 784_111_777.0
    static let date0 = "Sun, 06 Nov 1994 08:49:37 GMT"

    private func lifetime(_ headers: HTTPHeaders, status: Int = 200, heuristic: Double = 300) -> Double {
        Freshness.lifetime(status: status, headers: headers, responseTime: Self.t0, heuristicLifetime: heuristic)
    }

    /// RFC 9111 §4.2.1: max-age first, then Expires − Date, then the heuristic.
    @Test(arguments: [
        (["Cache-Control": "max-age=60"], 60.0),
        (["Cache-Control": "max-age=60, s-maxage=5"], 60),
        (["Cache-Control": "s-maxage=5"], 300),  // a private cache ignores s-maxage: heuristic
        (["Cache-Control": "max-age=60", "Expires": "Sun, 06 Nov 1994 09:49:37 GMT", "Date": date0], 60),
        (["Expires": "Sun, 06 Nov 1994 09:49:37 GMT", "Date": date0], 3600),
        (["Expires": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 09:49:37 GMT"], 0),  // never < 0
        (["Expires": "Sun, 06 Nov 1994 08:50:37 GMT"], 60),  // no Date: the response time
        (["Expires": "Sun, 06 Nov 1994 08:50:37 GMT", "Date": "garbage"], 60),
        (["Expires": "0"], 0),
        (["Expires": "-1"], 0),
        (["Expires": ""], 0),
        (["Cache-Control": "max-age=-1"], 0),
        (["Cache-Control": "max-age=1a"], 0),
        ([:], 300),
    ] as [(HTTPHeaders, Double)])
    func lifetimeRules(headers: HTTPHeaders, expected: Double) {
        #expect(lifetime(headers) == expected, "\(headers)")
    }

    /// RFC 9111 §4.2.1: with two Expires fields, the first is used.
    @Test func firstExpiresIsUsed() {
        let headers = HTTPHeaders([
            ("Date", Self.date0), ("Expires", "Sun, 06 Nov 1994 08:50:37 GMT"),
            ("Expires", "Sun, 06 Nov 1994 10:49:37 GMT"),
        ])
        #expect(lifetime(headers) == 60)
    }

    /// RFC 9111 §4.2.2: the heuristic applies only to heuristically cacheable statuses without explicit freshness.
    @Test(arguments: [(200, 300.0), (404, 300), (301, 300), (501, 300), (302, 0), (500, 0), (201, 0), (206, 0)])
    func heuristicOnlyForHeuristicallyCacheable(status: Int, expected: Double) {
        #expect(lifetime([:], status: status) == expected)
        #expect(lifetime(["Cache-Control": "public"], status: status) == expected, "public does not widen it")
        #expect(lifetime(["Cache-Control": "max-age=7"], status: status) == 7)
        #expect(lifetime(["Expires": "0"], status: status) == 0, "an explicit stale Expires wins over the heuristic")
    }

    /// RFC 9111 §4.2.3: apparent age, corrected Age with the response delay, resident time.
    @Test(arguments: [
        // (Date offset from response time, Age, request time offset, now offset, expected current age)
        (0.0, nil as String?, 0.0, 0.0, 0.0),
        (0, nil, 0, 100, 100),  // resident time only
        (-30, nil, 0, 0, 30),  // apparent age: Date 30 s before receipt
        (30, nil, 0, 0, 0),  // Date in the future: apparent age clamped to 0
        (0, "10", 0, 0, 10),  // Age
        (0, "10", -5, 0, 15),  // Age + response delay of 5
        (-40, "10", -5, 0, 40),  // apparent age larger than corrected Age
        (-40, "10", -5, 60, 100),  // plus resident time
        (0, "abc", -5, 0, 5),  // invalid Age ignored; response delay alone adds nothing over apparent 0
        (0, "-3", 0, 0, 0),
        (0, "7, 100", 0, 0, 7),  // list-based Age: the first member (§5.1)
        (0, "99999999999999", 0, 0, 2_147_483_648),  // saturated
        (0, nil, 5, -10, 0),  // clocks running backwards: no negative term
    ] as [(Double, String?, Double, Double, Double)])
    func currentAge(dateOffset: Double, age: String?, requestOffset: Double, nowOffset: Double, expected: Double) {
        let responseTime = Self.t0
        var headers: HTTPHeaders = ["Date": HTTPDate.format(responseTime + dateOffset)]
        if let age { headers.add(name: "Age", value: age) }
        let current = Freshness.currentAge(
            headers: headers, requestTime: responseTime + requestOffset, responseTime: responseTime,
            now: responseTime + nowOffset
        )
        #expect(current == expected)
    }

    /// RFC 9111 §4.2.3: without a Date, the apparent age is 0 (the response time stands for it).
    @Test func missingDate() {
        let age = Freshness.currentAge(headers: ["Age": "3"], requestTime: Self.t0 - 2, responseTime: Self.t0, now: Self.t0 + 10)
        #expect(age == 15)
    }

    /// RFC 9111 §4.2: fresh while lifetime > current age; exactly equal is stale.
    @Test func isFreshAtTheBoundary() {
        let headers: HTTPHeaders = ["Date": Self.date0, "Cache-Control": "max-age=60", "Age": "10"]
        func at(_ now: Double) -> Freshness {
            Freshness(status: 200, headers: headers, requestTime: Self.t0, responseTime: Self.t0, now: Self.t0 + now,
                      heuristicLifetime: 0)
        }
        #expect(at(0).currentAge == 10)
        #expect(at(49).isFresh)
        #expect(at(49).remaining == 1)
        #expect(!at(50).isFresh)
        #expect(at(50).staleness == 0)
        #expect(at(80).staleness == 30)
        #expect(at(80).remaining == 0)
    }

    /// RFC 9111 §4.2.1 with §5.3: `Expires: 0` is stale on arrival, even with no age at all.
    @Test func expiresZeroIsStaleAtOnce() {
        let f = Freshness(status: 200, headers: ["Expires": "0", "Date": Self.date0], requestTime: Self.t0,
                          responseTime: Self.t0, now: Self.t0, heuristicLifetime: 3600)
        #expect(!f.isFresh)
    }
}
