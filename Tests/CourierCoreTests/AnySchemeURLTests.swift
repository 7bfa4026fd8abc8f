@testable import CourierCore
import Testing

/// URLs of protocol plugins' schemes (``HTTPURL/init(anyScheme:)``), and that http(s) parsing did not move.
@Suite struct AnySchemeURLTests {
    @Test func httpParsingIsUnchangedAndTheStrictParserStillRefusesOtherSchemes() throws {
        for text in ["data:,x", "file:///etc/hosts", "memo://notes/1", "ftp://example.com/"] {
            #expect(HTTPURL(text) == nil, "\(text)")
        }
        for text in ["https://example.com/a?b", "http://[::1]:8080/x", "HTTP://Example.COM"] {
            #expect(HTTPURL(anyScheme: text) == HTTPURL(text), "\(text)")
        }
        // An http(s) URL the strict parser refuses is not let in by the other one.
        for text in ["http:example.com", "https:///x", "http://", "http://user@host/", "http:/x"] {
            #expect(HTTPURL(anyScheme: text) == nil, "\(text)")
        }
        #expect(try #require(HTTPURL(anyScheme: "https://example.com")).isHTTP)
    }

    @Test func fileAndCustomSchemesWithAnAuthority() throws {
        let file = try #require(HTTPURL(anyScheme: "FILE:///srv/a%20b.txt"))
        #expect(file.scheme == "file")
        #expect(file.host.isEmpty)
        #expect(file.path == "/srv/a%20b.txt")
        #expect(file.description == "file:///srv/a%20b.txt")
        #expect(!file.isHTTP)
        #expect(file.hasAuthority)
        let localhost = try #require(HTTPURL(anyScheme: "file://localhost/etc/hosts"))
        #expect(localhost.host == "localhost")
        #expect(try #require(HTTPURL(anyScheme: "file://")).description == "file:///")

        let memo = try #require(HTTPURL(anyScheme: "memo://Notes:9/v1/7?x=1#f"))
        #expect(memo.host == "notes")
        #expect(memo.port == 9)
        #expect(memo.query == "x=1")
        #expect(memo.description == "memo://notes:9/v1/7?x=1")
        #expect(try #require(HTTPURL(anyScheme: "memo://notes/")).port == 0)
        #expect(memo.resolving("8")?.description == "memo://notes:9/v1/8")
        // A port needs a host; userinfo and spaces are refused as for http.
        for text in ["file://:80/x", "memo://u@h/", "file:///a b", "1memo://x/", "me_mo://x/", "://x", "data:/x"] {
            #expect(HTTPURL(anyScheme: text) == nil, "\(text)")
        }
    }

    @Test func aURLWithoutAnAuthorityKeepsItsTextAndRoutesToTheDefaults() throws {
        let data = try #require(HTTPURL(anyScheme: "data:text/plain;base64,SGk=?x/y"))
        #expect(data.path == "text/plain;base64,SGk=?x/y")
        #expect(data.query == nil)
        #expect(data.host.isEmpty)
        #expect(data.firstPathComponent.isEmpty)
        #expect(data.resolving("/other") == nil)
        #expect(data.resolving("https://example.com/")?.description == "https://example.com/")
        let graph = PolicyGraph(services: [], defaults: .builtIn)
        let route = graph.route(for: data)
        #expect(route.serviceName == nil)
        #expect(route.endpointKey.description.count < 8, "the data is no part of the rate-limit key: \(route.endpointKey)")
    }

    @Test func everyParsedURLRoundTrips() throws {
        let samples = [
            "data:", "data:,", "data:,A%20brief%20note", "data:;base64,SGk", "urn:isbn:0451450523", "file:///", "file:///a/../b",
            "file://localhost/x", "memo://n/a?b", "memo://[::1]:5/x", "x-y.z+w://h", "mailto:a@example.com",
        ]
        for text in samples {
            let url = try #require(HTTPURL(anyScheme: text), "\(text)")
            let again = try #require(HTTPURL(anyScheme: url.description), "\(url.description)")
            #expect(again == url)
            #expect(again.description == url.description)
        }
    }

    @Test func byteRanges() {
        #expect(ByteRange(nil, size: 10) == .whole)
        #expect(ByteRange("bytes=0-4", size: 10) == .partial(0..<5))
        #expect(ByteRange("bytes=5-", size: 10) == .partial(5..<10))
        #expect(ByteRange("bytes=-3", size: 10) == .partial(7..<10))
        #expect(ByteRange("bytes=-30", size: 10) == .partial(0..<10))
        #expect(ByteRange("bytes=8-99", size: 10) == .partial(8..<10))
        #expect(ByteRange("Bytes = 2-2", size: 10) == .whole)
        #expect(ByteRange("bytes=2-2", size: 10) == .partial(2..<3))
        #expect(ByteRange("bytes=10-", size: 10) == .unsatisfiable)
        #expect(ByteRange("bytes=-0", size: 10) == .unsatisfiable)
        #expect(ByteRange("bytes=-5", size: 0) == .unsatisfiable)
        #expect(ByteRange("bytes=99999999999999999999999-", size: 10) == .unsatisfiable)
        #expect(ByteRange("bytes=0-1,3-4", size: 10) == .whole)
        #expect(ByteRange("bytes=4-2", size: 10) == .whole)
        #expect(ByteRange("items=0-1", size: 10) == .whole)
        #expect(ByteRange("bytes=a-b", size: 10) == .whole)
    }
}
