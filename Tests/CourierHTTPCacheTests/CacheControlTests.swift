import CourierCore
import Testing

@testable import CourierHTTPCache

/// `Cache-Control` parsing (RFC 9111 §5.2, §1.2.2, §4.2.1; RFC 9110 §5.6).
@Suite struct CacheControlTests {
    /// RFC 9111 §5.2: every directive with a delta-seconds argument, request and response, is recognised.
    @Test(arguments: ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error", "min-fresh", "max-stale"])
    func valuedDirectives(name: String) {
        #expect(seconds(name, CacheControl(fieldValues: ["\(name)=60"])) == 60)
        #expect(seconds(name, CacheControl(fieldValues: ["\(name.uppercased())=60"])) == 60, "case-insensitive")
        #expect(seconds(name, CacheControl(fieldValues: ["x-\(name)=60"])) == nil, "only the exact name")
        #expect(seconds(name, CacheControl()) == nil)
    }

    /// RFC 9111 §5.2: the flag directives, each alone.
    @Test(arguments: [
        "no-store", "no-cache", "must-revalidate", "proxy-revalidate", "private", "public", "immutable",
        "only-if-cached", "must-understand", "no-transform",
    ])
    func flags(name: String) {
        #expect(flag(name, CacheControl(fieldValues: [name])))
        #expect(flag(name, CacheControl(fieldValues: [name.uppercased()])), "names are case-insensitive")
        #expect(!flag(name, CacheControl(fieldValues: ["x-\(name)"])), "only the exact name")
        #expect(!flag(name, CacheControl()))
        let others = CacheControlTests.flagNames.filter { $0 != name }
        #expect(others.allSatisfy { !flag($0, CacheControl(fieldValues: [name])) }, "sets no other flag")
    }

    static let flagNames = [
        "no-store", "no-cache", "must-revalidate", "proxy-revalidate", "private", "public", "immutable",
        "only-if-cached", "must-understand", "no-transform",
    ]

    private func flag(_ name: String, _ cc: CacheControl) -> Bool {
        switch name {
        case "no-store": cc.noStore
        case "no-cache": cc.noCache
        case "must-revalidate": cc.mustRevalidate
        case "proxy-revalidate": cc.proxyRevalidate
        case "private": cc.isPrivate
        case "public": cc.isPublic
        case "immutable": cc.immutable
        case "only-if-cached": cc.onlyIfCached
        case "must-understand": cc.mustUnderstand
        case "no-transform": cc.noTransform
        default: false
        }
    }

    private func seconds(_ name: String, _ cc: CacheControl) -> Int64? {
        switch name {
        case "max-age": cc.maxAge
        case "s-maxage": cc.sharedMaxAge
        case "stale-while-revalidate": cc.staleWhileRevalidate
        case "stale-if-error": cc.staleIfError
        case "min-fresh": cc.minFresh
        case "max-stale": if case .seconds(let s) = cc.maxStale { s } else { nil }
        default: nil
        }
    }

    /// RFC 9111 §5.2 and RFC 9110 §5.6.1: lists in several fields, whitespace, empty elements, case.
    @Test func listsAcrossFieldsWithWhitespaceAndEmptyElements() {
        let headers = HTTPHeaders([("Cache-Control", " , Max-Age=10 ,, NO-cache"), ("cache-control", "private,")])
        let cc = CacheControl(headers)
        #expect(cc.maxAge == 10)
        #expect(cc.noCache)
        #expect(cc.isPrivate)
        #expect(!cc.noStore)
    }

    /// RFC 9110 §5.6.4: a comma inside a quoted string does not end the directive; backslash escapes.
    @Test func quotedStringsKeepTheirCommas() {
        let cc = CacheControl(fieldValues: [#"no-cache="Set-Cookie, X-Token", private="a\"b", max-age=5"#])
        #expect(cc.noCache)
        #expect(cc.noCacheFields == ["set-cookie", "x-token"])
        #expect(cc.isPrivate)
        #expect(cc.maxAge == 5)
        #expect(!cc.noStore, "nothing in the quotes is read as a directive")
        #expect(CacheControl(fieldValues: [#"x-ext="no-store, max-age=1", public"#]).isPublic)
        #expect(!CacheControl(fieldValues: [#"x-ext="no-store, max-age=1", public"#]).noStore)
        #expect(CacheControl(fieldValues: [#"x-ext="no-store, max-age=1", public"#]).maxAge == nil)
    }

    /// The grammar is over bytes (RFC 9110 §5.6): a quote or comma followed by a combining mark is still a quote
    /// or a comma, though Swift sees one `Character`; bytes beyond ASCII in a quoted string are kept as they are.
    @Test func delimitersAreBytesNotCharacters() {
        let cc = CacheControl(fieldValues: ["x-ext=\"\u{301}no-store, max-age=1\",\u{301} Public, no-cache=\"X-\u{E9}t\u{E9}\""])
        #expect(!cc.noStore && cc.maxAge == nil, "the quoted string was read as directives")
        #expect(!cc.isPublic, "a combining mark makes the name another one")
        #expect(cc.noCache)
        #expect(cc.noCacheFields == ["x-\u{E9}t\u{E9}"])
        var names: [String] = []
        CacheControl.forEachDirective(in: " MAX-AGE = 7 ,\tPrivate\t") { name, _ in names.append(name) }
        #expect(names == ["max-age", "private"])
        #expect(CacheControl(fieldValues: [" MAX-AGE=7 "]).maxAge == 7)
    }

    /// RFC 9111 §5.2: recipients accept the quoted form of an argument too (`max-age="60"`).
    @Test func quotedArgumentIsAccepted() {
        #expect(CacheControl(fieldValues: [#"max-age="60""#]).maxAge == 60)
        #expect(CacheControl(fieldValues: [#"max-stale="3""#]).maxStale == .seconds(3))
    }

    /// RFC 9111 §5.2: unknown directives (with or without arguments) are ignored.
    @Test func unknownDirectivesAreIgnored() {
        let cc = CacheControl(fieldValues: ["community=\"UCI\", foo, bar=baz, max-age=3"])
        #expect(cc == { var c = CacheControl(); c.maxAge = 3; return c }())
    }

    /// RFC 9111 §4.2.1: with a directive repeated, the first occurrence is used (across fields too).
    @Test(arguments: [
        (["max-age=10, max-age=20"], Int64(10)),
        (["max-age=20", "max-age=10"], 20),
        (["max-age=0, max-age=100"], 0),
        (["max-age=abc, max-age=100"], 0),
    ] as [([String], Int64)])
    func firstOccurrenceWins(fields: [String], expected: Int64) {
        #expect(CacheControl(fieldValues: fields).maxAge == expected)
    }

    /// RFC 9111 §1.2.2 and §4.2.1: delta-seconds edge cases. An invalid `max-age` means stale (0); an invalid
    /// `max-stale`, `min-fresh`, `stale-while-revalidate` or `stale-if-error` grants nothing (nil); huge values
    /// saturate at 2^31.
    @Test(arguments: [
        ("max-age=-1", Int64?.some(0)), ("max-age=1a", 0), ("max-age=", 0), ("max-age", 0), ("max-age=1.5", 0),
        ("max-age= 5", 5), ("max-age=007", 7), ("max-age=0", 0),
        ("max-age=2147483647", 2_147_483_647), ("max-age=2147483648", 2_147_483_648),
        ("max-age=2147483649", 2_147_483_648), ("max-age=99999999999999999999999999", 2_147_483_648),
        ("max-age=0000000000000000000000012", 12),
    ] as [(String, Int64?)])
    func maxAgeDeltaSeconds(field: String, expected: Int64?) {
        #expect(CacheControl(fieldValues: [field]).maxAge == expected, "\(field)")
    }

    @Test(arguments: ["-1", "1a", "", "+5", "0x10"])
    func invalidAllowancesGrantNothing(value: String) {
        let cc = CacheControl(fieldValues: [
            "stale-while-revalidate=\(value), stale-if-error=\(value), min-fresh=\(value), max-stale=\(value)",
        ])
        #expect(cc.staleWhileRevalidate == nil)
        #expect(cc.staleIfError == nil)
        #expect(cc.minFresh == nil)
        #expect(cc.maxStale == nil)
        #expect(CacheControl(fieldValues: ["s-maxage=\(value)"]).sharedMaxAge == 0)
    }

    /// RFC 9111 §5.2.1.2: `max-stale` without a value accepts any staleness; with one, up to it.
    @Test func maxStale() {
        #expect(CacheControl(fieldValues: ["max-stale"]).maxStale == .any)
        #expect(CacheControl(fieldValues: ["max-stale=30"]).maxStale == .seconds(30))
        #expect(CacheControl.MaxStale.any.accepts(staleness: 1e12))
        #expect(CacheControl.MaxStale.seconds(30).accepts(staleness: 30))
        #expect(!CacheControl.MaxStale.seconds(30).accepts(staleness: 30.5))
    }

    /// RFC 9111 §5.2.2.4: `no-cache` with and without field names.
    @Test func noCacheQualifiedAndNot() {
        #expect(CacheControl(fieldValues: ["no-cache"]).noCacheFields.isEmpty)
        #expect(CacheControl(fieldValues: ["no-cache"]).noCache)
        #expect(CacheControl(fieldValues: ["no-cache=Set-Cookie"]).noCacheFields == ["set-cookie"])
        #expect(CacheControl(fieldValues: ["no-cache=Set-Cookie"]).noCache)
    }
}

