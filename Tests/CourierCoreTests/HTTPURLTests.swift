import CourierCore
import Testing

@Suite struct HTTPURLTests {
    @Test func parsesTheParts() throws {
        let url = try #require(HTTPURL("HTTPS://API.Example.com:8443/v1/search?q=a%20b#frag"))
        #expect(url.scheme == "https")
        #expect(url.host == "api.example.com")
        #expect(url.port == 8443)
        #expect(url.path == "/v1/search")
        #expect(url.query == "q=a%20b")
        #expect(url.requestTarget == "/v1/search?q=a%20b")
        #expect(url.hostHeader == "api.example.com:8443")
        #expect(url.firstPathComponent == "/v1")
    }

    @Test func defaultsPortAndPath() throws {
        let url = try #require(HTTPURL("http://example.com"))
        #expect(url.port == 80)
        #expect(url.path == "/")
        #expect(url.hostHeader == "example.com")
        #expect(url.firstPathComponent == "/")
        #expect(try #require(HTTPURL("https://example.com:443/x")).hostHeader == "example.com")
    }

    @Test func ipv6Literals() throws {
        let url = try #require(HTTPURL("http://[::1]:8080/a"))
        #expect(url.host == "::1")
        #expect(url.isIPv6Literal)
        #expect(url.hostHeader == "[::1]:8080")
        #expect(url.description == "http://[::1]:8080/a")
    }

    @Test(arguments: [
        "", "example.com", "ftp://example.com/", "http://", "http:///path", "http://a b.com/", "http://example.com/a b",
        "http://example.com:0/", "http://example.com:65536/", "http://example.com:x/", "http://user:pw@example.com/",
        "http://[::1/", "http://exa\r\nmple.com/", "http://[zz::1]/",
    ])
    func refusesMalformed(_ text: String) {
        #expect(HTTPURL(text) == nil)
    }

    @Test func resolvesReferences() throws {
        let base = try #require(HTTPURL("https://a.example.com/dir/page?x=1"))
        #expect(base.resolving("/root")?.description == "https://a.example.com/root")
        #expect(base.resolving("other")?.description == "https://a.example.com/dir/other")
        #expect(base.resolving("../up?y=2")?.description == "https://a.example.com/up?y=2")
        #expect(base.resolving("//b.example.com/z")?.description == "https://b.example.com/z")
        #expect(base.resolving("http://c.example.com/")?.description == "http://c.example.com/")
        #expect(base.resolving("?q")?.description == "https://a.example.com/dir/page?q")
        #expect(base.resolving("mailto:x@example.com") == nil)
    }
}
