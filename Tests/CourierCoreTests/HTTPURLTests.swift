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

    /// Every bracketed form RFC 3986's IPv6address allows, with the host each parses to.
    @Test(arguments: [
        ("http://[::]/", "::"), ("http://[::1]/", "::1"), ("http://[1::]/", "1::"),
        ("http://[1:2:3:4:5:6:7:8]/", "1:2:3:4:5:6:7:8"), ("http://[1:2:3:4:5:6:7::]/", "1:2:3:4:5:6:7::"),
        ("http://[::2:3:4:5:6:7:8]/", "::2:3:4:5:6:7:8"), ("http://[1::8]/", "1::8"),
        ("http://[2001:DB8::A]:8080/x", "2001:db8::a"), ("http://[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        ("http://[::ffff:192.0.2.1]/", "::ffff:192.0.2.1"), ("http://[1:2:3:4:5:6:0.0.0.0]/", "1:2:3:4:5:6:0.0.0.0"),
        ("http://[1:2:3:4:5::255.255.255.255]/", "1:2:3:4:5::255.255.255.255"), ("http://[::1.2.3.4]/", "::1.2.3.4"),
    ])
    func acceptsEveryIPv6Form(_ text: String, _ host: String) throws {
        let url = try #require(HTTPURL(text))
        #expect(url.host == host)
        #expect(url.isIPv6Literal)
        #expect(HTTPURL(url.description) == url, "\(url.description) parses back")
    }

    /// Brackets around anything but an IPv6 address, found by fuzzing: `[１]` (full-width digit one) parsed to
    /// a host whose description did not parse again, and `[1]` was fetched as host `1`.
    @Test(arguments: [
        "http://[１]/", "http://[1]/", "http://[1]:9/", "http://[]/", "http://[::１]/", "http://[a.b]/",
        "http://[192.0.2.1]/", "http://[example.com]/", "http://[:]/", "http://[:::]/", "http://[1:::2]/",
        "http://[1::2::3]/", "http://[:1::]/", "http://[::1:]/", "http://[1:2:3:4:5:6:7]/",
        "http://[1:2:3:4:5:6:7:8:9]/", "http://[1:2:3:4:5:6:7:8::]/", "http://[::1:2:3:4:5:6:7:8]/",
        "http://[12345::]/", "http://[g::]/", "http://[::1%25eth0]/", "http://[fe80::1%eth0]/", "http://[v1.x]/",
        "http://[::1.2.3]/", "http://[::1.2.3.4.5]/", "http://[::256.0.0.0]/", "http://[::01.2.3.4]/",
        "http://[1.2.3.4::]/", "http://[1:2:3:4:5:6:7:1.2.3.4]/", "http://[::1]x/", "http://[::1]:/",
        "http://[::1]:0/", "http://[::1]]/", "http://[[::1]/", "http://[::1/", "http://::1/",
    ])
    func refusesBracketsAroundAnythingButIPv6(_ text: String) {
        #expect(HTTPURL(text) == nil)
    }

    @Test func descriptionsParseBackToTheSameURL() throws {
        // Mixed cases, default and explicit ports, empty paths, queries with '?' and '/', dot segments kept.
        let texts = [
            "HTTP://Example.COM", "https://example.com:443", "http://a.b:080/x/../y?q=/?#f", "http://h?x",
            "http://[::1]", "https://[2001:DB8::1]:8443/p%20q?r", "http://h//double//slash/", "http://h/é?ü",
            "http://1.2.3.4:65535/", "http://under_score.example~/",
        ]
        for text in texts {
            let url = try #require(HTTPURL(text), "\(text)")
            #expect(HTTPURL(url.description) == url, "\(text) → \(url.description)")
            #expect(HTTPURL(url.description)?.description == url.description)
        }
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

    /// RFC 3986 delimits by code point: a `?` followed by a combining mark (one Swift Character) still starts the
    /// query, in a URL and in a reference alike, so a resolved URL's description parses back to it (FuzzURL's
    /// finding, kept in Fuzz/corpus/url/).
    @Test func delimitersFollowedByCombiningMarksStillDelimit() throws {
        let url = try #require(HTTPURL("http://a.example/p?\u{30B}q"))
        #expect(url.path == "/p")
        #expect(url.query == "\u{30B}q")
        let base = try #require(HTTPURL("http://a.example/dir/x"))
        let resolved = try #require(base.resolving("b/.\u{30B}/c?\u{30B}d"))
        #expect(resolved.query == "\u{30B}d")
        #expect(HTTPURL(resolved.description) == resolved)
        #expect(try #require(base.resolving("e/\u{30B}f")).path == "/dir/e/\u{30B}f")
    }
}
