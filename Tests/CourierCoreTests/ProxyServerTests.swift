import CourierCore
import Testing

struct ProxyServerTests {
    @Test func aProxyURLIsReadAsCurlReadsIt() throws {
        let plain = try ProxyServer.parse("proxy.corp:3128")
        #expect(plain == ProxyServer(scheme: .http, host: "proxy.corp", port: 3128))
        #expect(try ProxyServer.parse("http://proxy.corp").port == 1080)
        #expect(try ProxyServer.parse("https://Proxy.Corp/").port == 443)
        #expect(try ProxyServer.parse("https://Proxy.Corp/").host == "proxy.corp")
        let socks = try ProxyServer.parse("socks5h://alice:p%40ss%3Aword@[::1]:1080")
        #expect(socks.scheme == .socks5h)
        #expect(socks.host == "::1")
        #expect(socks.username == "alice")
        #expect(socks.password == "p@ss:word")
        #expect(try ProxyServer.parse("SOCKS5://10.0.0.1").scheme == .socks5)
    }

    @Test func theDescriptionNeverShowsThePassword() throws {
        let proxy = try ProxyServer.parse("http://alice:hunter2@proxy:3128")
        #expect(proxy.description == "http://alice@proxy:3128")
        #expect(!"\(proxy)".contains("hunter2"))
    }

    @Test func badProxyURLsAreRefusedWithTheirReason() {
        #expect(throws: ProxyServer.ParseError.unknownScheme("ftp")) { try ProxyServer.parse("ftp://proxy:21") }
        #expect(throws: ProxyServer.ParseError.unknownScheme("socks4")) { try ProxyServer.parse("socks4://proxy") }
        #expect(throws: ProxyServer.ParseError.self) { try ProxyServer.parse("http://") }
        #expect(throws: ProxyServer.ParseError.self) { try ProxyServer.parse("http://proxy:99999") }
        #expect(throws: ProxyServer.ParseError.self) { try ProxyServer.parse("http://proxy:3128/path") }
        #expect(throws: ProxyServer.ParseError.self) { try ProxyServer.parse("http://pro xy:3128") }
    }
}
