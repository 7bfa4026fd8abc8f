import CourierCore
import CourierTestSupport
import Testing

@testable import CourierHTTPCache

/// The stored-response format: it round-trips, and no bytes make decoding trap.
@Suite(.onThreadsOfTheirOwn) struct StoredResponseTests {
    static let sample = StoredResponse(
        method: .get, url: "https://api.example.com/v1/items?page=2",
        variedFields: [HTTPHeaders.Field(name: "accept-language", value: "de, en;q=0.5")],
        status: 200, reason: "OK",
        headers: ["Content-Type": "application/json", "Cache-Control": "max-age=60", "ETag": "\"v1\"", "Set-Cookie": "a=1"],
        requestTime: 1_795_000_000_000_000_000, responseTime: 1_795_000_000_250_000_000,
        body: Array("{\"items\":[1,2,3]}".utf8)
    )

    @Test func aResponseRoundTrips() throws {
        let decoded = try StoredResponse(decoding: Self.sample.encoded())
        #expect(decoded == Self.sample)
        // Repeated fields keep their order and multiplicity.
        var twice = Self.sample
        twice.headers = HTTPHeaders([("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Empty", "")])
        twice.body = []
        #expect(try StoredResponse(decoding: twice.encoded()) == twice)
    }

    @Test func everyTruncationIsAnErrorNotATrap() throws {
        let bytes = Self.sample.encoded()
        for length in 0..<bytes.count {
            #expect(throws: StoredResponse.DecodingError.self) { try StoredResponse(decoding: Array(bytes[..<length])) }
        }
        // A byte too many is as wrong as one too few.
        #expect(throws: StoredResponse.DecodingError.truncated) { try StoredResponse(decoding: bytes + [0]) }
    }

    @Test func otherVersionsAndBadFieldsAreRefused() throws {
        var bytes = Self.sample.encoded()
        bytes[0] = 2
        #expect(throws: StoredResponse.DecodingError.unsupportedVersion(2)) { try StoredResponse(decoding: bytes) }
        var badUTF8 = Self.sample
        badUTF8.url = "x"
        var encoded = badUTF8.encoded()
        // The URL's one byte (after the version, the method's length and "GET", the URL's length).
        let urlByte = 1 + 4 + 3 + 4
        #expect(encoded[urlByte] == UInt8(ascii: "x"))
        encoded[urlByte] = 0xFF
        #expect(throws: StoredResponse.DecodingError.invalidField) { try StoredResponse(decoding: encoded) }
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 2026)
        let valid = Self.sample.encoded()
        for round in 0..<20_000 {
            var bytes = valid
            // Flip a few bytes, or cut, or both.
            for _ in 0..<(1 + round % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
            if round % 3 == 0 { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1)))) }
            _ = try? StoredResponse(decoding: bytes)
        }
        for _ in 0..<2_000 {
            let count = Int(random.next() % 64)
            _ = try? StoredResponse(decoding: (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }
}

/// Where responses are filed: method (HEAD under GET), URL, credentials' owner, and the varied request fields.
@Suite struct HTTPCacheKeyTests {
    let url = HTTPURL("https://API.example.com:443/v1/items?page=2")!

    @Test func headFilesUnderGetAndTheURLIsNormalised() {
        let get = HTTPCacheKey(method: .get, url: url, identity: nil)
        #expect(get.primary == "GET https://api.example.com/v1/items?page=2")
        #expect(HTTPCacheKey(method: .head, url: url, identity: nil) == get)
        #expect(HTTPCacheKey(method: .post, url: url, identity: nil) != get)
    }

    @Test func credentialsOwnersNeverShareAnEntry() {
        let alice = HTTPCacheKey(method: .get, url: url, identity: "oauth/alice")
        let bob = HTTPCacheKey(method: .get, url: url, identity: "oauth/bob")
        #expect(alice != bob)
        #expect(alice != HTTPCacheKey(method: .get, url: url, identity: nil))
        #expect(alice.varyIndex != bob.varyIndex)
    }

    @Test func variantsAreSelectedByTheVariedFieldsOnly() {
        let key = HTTPCacheKey(method: .get, url: url, identity: nil)
        let names = HTTPCacheKey.varyNames(of: ["Vary": "Accept-Language, accept-encoding"])
        #expect(names == ["accept-encoding", "accept-language"])
        let german: HTTPHeaders = ["Accept-Language": " de ", "Accept-Encoding": "gzip", "User-Agent": "a"]
        let sameGerman: HTTPHeaders = ["accept-encoding": "gzip", "ACCEPT-LANGUAGE": "de", "User-Agent": "b"]
        let english: HTTPHeaders = ["Accept-Language": "en", "Accept-Encoding": "gzip"]
        let none: HTTPHeaders = ["Accept-Encoding": "gzip"]
        #expect(key.variant(varyNames: names, request: german) == key.variant(varyNames: names, request: sameGerman))
        #expect(key.variant(varyNames: names, request: german) != key.variant(varyNames: names, request: english))
        // A field the request lacks differs from an empty one and from any value.
        #expect(key.variant(varyNames: names, request: none) != key.variant(varyNames: names, request: english))
        #expect(key.variant(varyNames: [], request: german) == key.primary)
    }
}
