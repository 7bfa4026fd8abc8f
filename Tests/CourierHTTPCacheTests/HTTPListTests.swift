import CourierCore
import Testing

@testable import CourierHTTPCache

/// Lists in `Vary`, `Age` and `no-cache="…"` are split at commas as bytes (RFC 9110 §5.6.1).
@Suite struct HTTPListTests {
    @Test func elementsAreSplitAtEveryCommaAndTrimmed() {
        #expect(HTTPList.elements(of: " a ,\tb,, ,c") == ["a", "b", "c"])
        #expect(HTTPList.elements(of: "").isEmpty)
        #expect(HTTPList.elements(of: " , ").isEmpty)
        // A comma or a space followed by a combining mark is one Character to Swift, but still a comma or a space.
        #expect(HTTPList.elements(of: "a,\u{301}b") == ["a", "\u{301}b"])
        #expect(HTTPList.elements(of: "a, \u{301}b") == ["a", "\u{301}b"])
        #expect(HTTPList.elements(of: Substring("x,y")) == ["x", "y"])
    }

    @Test func theFirstElementIsTheTextBeforeTheFirstComma() {
        #expect(HTTPList.firstElement(of: " 5 , 7") == "5")
        #expect(HTTPList.firstElement(of: "5,\u{301}") == "5")
        #expect(HTTPList.firstElement(of: ",5") == "")
        #expect(HTTPList.firstElement(of: "") == nil)
    }

    @Test func ageIsReadFromItsFirstMemberAsBytes() {
        func age(_ value: String) -> Double {
            Freshness.currentAge(headers: ["Age": value], requestTime: 0, responseTime: 0, now: 0)
        }
        #expect(age(" 120 , 5") == 120)
        #expect(age("5,\u{301}") == 5, "a combining mark after the comma does not join it to the number")
        #expect(age("-1") == 0)
        #expect(age("99999999999") == Double(CacheControl.maximumDeltaSeconds))
    }

    @Test func varyNamesAreTokensOrAStarLowerCasedOnceAndSorted() {
        #expect(HTTPCacheKey.varyNames(of: ["Vary": "Accept-Language, accept-encoding, ACCEPT-language"])
            == ["accept-encoding", "accept-language"])
        // Not tokens: no request Courier sends can hold such a field, so they select nothing and are dropped.
        #expect(HTTPCacheKey.varyNames(of: ["Vary": "x-\u{E9}, a b, \"q\", origin"]) == ["origin"])
        #expect(HTTPCacheKey.varyNames(of: ["Vary": "Origin,\u{301}Accept"]) == ["origin"])
        #expect(HTTPCacheKey.varyNames(of: ["Vary": "*,\u{301}Accept, Origin"]) == ["*", "origin"])
        var two = HTTPHeaders()
        two.add(name: "Vary", value: "B")
        two.add(name: "vary", value: "a")
        #expect(HTTPCacheKey.varyNames(of: two) == ["a", "b"])
    }

    /// Split as `Character`s, `*,\u{301}Accept` was one member, not `*`, and the response was stored.
    @Test func aStarBeforeACombiningMarkStillMeansVaryAll() {
        let verdict = Storability(
            method: .get, requestHeaders: [:], status: 200,
            responseHeaders: ["Vary": "*,\u{301}Accept", "Cache-Control": "max-age=60"]
        )
        #expect(verdict == .notStorable(.varyAll))
    }
}
