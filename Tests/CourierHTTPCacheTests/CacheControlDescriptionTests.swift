import CourierCore
import Testing

@testable import CourierHTTPCache

/// `CacheControl.description`: one canonical field value that parses back to the same directives.
@Suite struct CacheControlDescriptionTests {
    @Test func everyDirectiveInAFixedOrder() {
        var all = CacheControl()
        all.maxAge = 60
        all.sharedMaxAge = 120
        all.noStore = true
        all.noCache = true
        all.mustRevalidate = true
        all.proxyRevalidate = true
        all.isPrivate = true
        all.isPublic = true
        all.mustUnderstand = true
        all.noTransform = true
        all.immutable = true
        all.staleWhileRevalidate = 30
        all.staleIfError = 600
        all.maxStale = .seconds(5)
        all.minFresh = 10
        all.onlyIfCached = true
        #expect(all.description == "max-age=60, s-maxage=120, no-store, no-cache, must-revalidate, proxy-revalidate, "
            + "private, public, must-understand, no-transform, immutable, stale-while-revalidate=30, "
            + "stale-if-error=600, max-stale=5, min-fresh=10, only-if-cached")
        #expect(CacheControl(fieldValues: [all.description]) == all)
        #expect(CacheControl().description == "")
    }

    @Test func argumentsAreWrittenCanonically() {
        #expect(CacheControl(fieldValues: ["MAX-AGE=007, Max-Stale"]).description == "max-age=7, max-stale")
        #expect(CacheControl(fieldValues: ["max-age=-1"]).description == "max-age=0", "invalid is the most restrictive")
        #expect(CacheControl(fieldValues: ["max-age=99999999999"]).description == "max-age=2147483648")
        #expect(CacheControl(fieldValues: ["stale-if-error=x, x-unknown=1"]).description == "")
        #expect(CacheControl(fieldValues: [#"no-cache="Set-Cookie,X-A""#]).description == #"no-cache="set-cookie, x-a""#)
        #expect(CacheControl(fieldValues: ["no-cache=Set-Cookie"]).description == #"no-cache="set-cookie""#)
        #expect(CacheControl(fieldValues: [#"no-cache="""#]).description == "no-cache")
    }

    @Test func quotesAndBackslashesInFieldNamesAreEscaped() {
        var control = CacheControl()
        control.noCache = true
        control.noCacheFields = [#"a"b"#, #"c\d"#]
        #expect(control.description == #"no-cache="a\"b, c\\d""#)
        #expect(CacheControl(fieldValues: [control.description]) == control)
        let parsed = CacheControl(fieldValues: [#"no-cache="x\"y, \\z""#])
        #expect(parsed.noCacheFields == [#"x"y"#, #"\z"#])
        #expect(CacheControl(fieldValues: [parsed.description]) == parsed)
    }

    /// Values that parse to something, and whose description must parse to the same thing again.
    static let roundTrips = [
        "max-age=3600, public",
        #"no-cache="Set-Cookie, X-Token", private="a\"b", max-age=5"#,
        "no-store, max-stale, min-fresh=10, stale-while-revalidate=30, stale-if-error=600",
        #"max-age=-1, MAX-AGE=5, x-ext="no-store, max-age=1", max-stale=007"#,
        "no-cache=\"X-A,\u{301} x-\u{E9}t\u{E9}\", immutable",
        "no-cache=\"a,\t\u{301}b\"",
        "private=\"unterminated, max-age=5",
    ]

    @Test(arguments: roundTrips)
    func theDescriptionParsesBackToTheSameDirectives(value: String) {
        let control = CacheControl(fieldValues: [value])
        let again = CacheControl(fieldValues: [control.description])
        #expect(again == control)
        #expect(again.description == control.description)
    }
}
