import CourierCore
import Testing

@testable import CourierHTTPCache

/// Refreshing a stored response from a 304 (RFC 9111 §3.2, §4.3.3, §4.3.4).
@Suite struct RevalidationTests {
    static let stored = HTTPHeaders([
        ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Content-Type", "application/json"), ("Content-Length", "42"),
        ("ETag", #""v1""#), ("Cache-Control", "max-age=60"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
        ("X-Kept", "yes"),
    ])

    /// RFC 9111 §3.2: the 304's fields replace the stored ones; Content-Length and hop-by-hop fields do not.
    @Test func mergeReplacesAddsAndSkips() {
        let notModified = HTTPHeaders([
            ("date", "Sun, 06 Nov 1994 09:49:37 GMT"), ("Cache-Control", "max-age=120"), ("Content-Length", "0"),
            ("Connection", "keep-alive, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Set-Cookie", "c=3"), ("X-New", "n"), ("X-New", "m"),
            ("ETag", #""v1""#),
        ])
        let result = Revalidation(storedHeaders: Self.stored, notModifiedHeaders: notModified, requestTime: 10, responseTime: 11)
        let expected = HTTPHeaders([
            ("Date", "Sun, 06 Nov 1994 09:49:37 GMT"), ("Content-Type", "application/json"), ("Content-Length", "42"),
            ("ETag", #""v1""#), ("Cache-Control", "max-age=120"), ("Set-Cookie", "c=3"), ("X-Kept", "yes"),
            ("X-New", "n"), ("X-New", "m"),
        ])
        #expect(result.headers == expected, "\(result.headers)")
        #expect(result.requestTime == 10)
        #expect(result.responseTime == 11)
    }

    /// RFC 9111 §4.3.4: a 304 with no fields leaves the stored head as it was, except the fields that dated the
    /// old response (`Date`, `Age`): the freshened response's age counts from the 304's arrival.
    @Test func emptyNotModifiedChangesNothingButTheAgingFields() {
        var stored = Self.stored
        stored.add(name: "Age", value: "100")
        let result = Revalidation(storedHeaders: stored, notModifiedHeaders: [:], requestTime: 0, responseTime: 0)
        var expected = Self.stored
        expected.remove(name: "Date")
        #expect(result.headers == expected)
    }

    /// RFC 9111 §4.3.4 with §4.2.3: after the merge, the age counts from the 304's Date and the new times.
    @Test func freshenedTimesRestartTheAge() {
        let t = 784_115_377.0  // Sun, 06 Nov 1994 09:49:37 GMT
        let result = Revalidation(
            storedHeaders: Self.stored, notModifiedHeaders: ["Date": HTTPDate.format(t), "Age": "5"],
            requestTime: t - 1, responseTime: t
        )
        let f = Freshness(status: 200, headers: result.headers, requestTime: result.requestTime,
                          responseTime: result.responseTime, now: t + 10, heuristicLifetime: 0)
        #expect(f.currentAge == 16)
        #expect(f.isFresh)
    }

    /// RFC 9111 §4.3.4: which stored response a 304 refers to.
    @Test(arguments: [
        (["ETag": #""v1""#], true), (["ETag": #"W/"v1""#], true), (["ETag": #""v2""#], false),
        (["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"], false),  // the stored one has none
        ([:], true),
    ] as [(HTTPHeaders, Bool)])
    func matches(notModified: HTTPHeaders, expected: Bool) {
        #expect(Revalidation.matches(storedHeaders: Self.stored, notModifiedHeaders: notModified) == expected)
    }

    @Test func matchesByLastModified() {
        let stored: HTTPHeaders = ["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"]
        #expect(Revalidation.matches(storedHeaders: stored, notModifiedHeaders: ["Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT"]))
        #expect(!Revalidation.matches(storedHeaders: stored, notModifiedHeaders: ["Last-Modified": "Sun, 06 Nov 1994 08:49:38 GMT"]))
        #expect(!Revalidation.matches(storedHeaders: stored, notModifiedHeaders: ["ETag": #""v1""#]))
    }
}
