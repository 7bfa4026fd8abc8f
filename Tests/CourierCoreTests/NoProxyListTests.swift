import CourierCore
import Testing

/// `no_proxy` matching, table-driven from curl's own unit test (tests/unit/unit1614.c), with curl 7.87's rule for a
/// name without a leading dot (it matches the names under it too, at a dot boundary: 7.86 had briefly matched the
/// exact name only), plus the ports and `*` entries curl's documentation describes.
struct NoProxyListTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let host: String
        let list: String
        let matches: Bool
        var port = 80
        var testDescription: String { "\(host):\(port) in '\(list)' → \(matches)" }
    }

    static let curlCases: [Case] = [
        Case(host: "www.example.com", list: "localhost,.example.com,.example.de", matches: true),
        Case(host: "www.example.com.", list: "localhost,.example.com,.example.de", matches: true),
        Case(host: "example.com", list: "localhost,.example.com,.example.de", matches: true),
        Case(host: "example.com.", list: "localhost,.example.com,.example.de", matches: true),
        Case(host: "www.example.com", list: "localhost,.example.com.,.example.de", matches: true),
        Case(host: "www.example.com", list: "localhost,www.example.com.,.example.de", matches: true),
        Case(host: "example.com", list: "localhost,example.com,.example.de", matches: true),
        Case(host: "example.com.", list: "localhost,example.com,.example.de", matches: true),
        // curl 7.86.0 said false here; 7.87.0 restored the suffix match its documentation promises.
        Case(host: "www.example.com", list: "localhost,example.com,.example.de", matches: true),
        Case(host: "127.0.0.1", list: "127.0.0.1,localhost", matches: true),
        Case(host: "127.0.0.1", list: "127.0.0.1,localhost,", matches: true),
        Case(host: "127.0.0.1", list: "127.0.0.1/8,localhost,", matches: true),
        Case(host: "127.0.0.1", list: "127.0.0.1/28,localhost,", matches: true),
        Case(host: "127.0.0.1", list: "127.0.0.1/31,localhost,", matches: true),
        Case(host: "127.0.0.1", list: "localhost,127.0.0.1", matches: true),
        Case(host: "127.0.0.1", list: "localhost,127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.127.0.0.1.", matches: false),
        Case(host: "localhost", list: "localhost,127.0.0.1", matches: true),
        Case(host: "localhost", list: "127.0.0.1,localhost", matches: true),
        Case(host: "foobar", list: "barfoo", matches: false),
        Case(host: "foobar", list: "foobar", matches: true),
        Case(host: "192.168.0.1", list: "foobar", matches: false),
        Case(host: "192.168.0.1", list: "192.168.0.0/16", matches: true),
        Case(host: "192.168.0.1", list: "192.168.0.0/24", matches: true),
        Case(host: "192.168.0.1", list: "192.168.0.0/32", matches: false),
        Case(host: "192.168.0.1", list: "192.168.0.0", matches: false),
        Case(host: "192.168.1.1", list: "192.168.0.0/24", matches: false),
        Case(host: "192.168.1.1", list: "foo, bar, 192.168.0.0/24", matches: false),
        Case(host: "192.168.1.1", list: "foo, bar, 192.168.0.0/16", matches: true),
        Case(host: "[::1]", list: "foo, bar, 192.168.0.0/16", matches: false),
        Case(host: "[::1]", list: "foo, bar, ::1/64", matches: true),
        Case(host: "bar", list: "foo, bar, ::1/64", matches: true),
        Case(host: "BAr", list: "foo, bar, ::1/64", matches: true),
        Case(host: "BAr", list: "foo,,,,,              bar, ::1/64", matches: true),
        Case(host: "www.example.com", list: "foo, .example.com", matches: true),
        Case(host: "www.example.com", list: "www2.example.com, .example.net", matches: false),
        Case(host: "example.com", list: ".example.com, .example.net", matches: true),
        Case(host: "nonexample.com", list: ".example.com, .example.net", matches: false),
        // curl's CIDR table (Curl_cidr4_match, Curl_cidr6_match).
        Case(host: "192.160.0.1", list: "192.160.0.1/33", matches: false),
        Case(host: "192.160.0.1", list: "192.160.0.1/32", matches: true),
        Case(host: "192.160.0.1", list: "192.160.0.1/0", matches: true),
        Case(host: "192.160.0.1", list: "192.160.0.1/20", matches: true),
        Case(host: "192.160.0.1", list: "10.0.0.1/8", matches: false),
        Case(host: "192.160.0.1", list: "10.0.0.1/0", matches: false),  // curl: 0 bits = the whole address
        Case(host: "::1", list: "0:0::1/128", matches: true),
        Case(host: "::1", list: "0:0::1/129", matches: false),
        Case(host: "fe80::ab47:4396:55c9:8474", list: "fe80::ab47:4396:55c9:8474/64", matches: true),
    ]

    static let moreCases: [Case] = [
        Case(host: "anything.example", list: "*", matches: true),
        Case(host: "10.1.2.3", list: " * ", matches: true),
        // Never a substring: only whole names and suffixes at a dot.
        Case(host: "corp.example.com.evil.net", list: "example.com", matches: false),
        Case(host: "myexample.com", list: "example.com", matches: false),
        Case(host: "example.co", list: "example.com", matches: false),
        // Ports: an entry with a port exempts only that port.
        Case(host: "internal.example", list: "internal.example:8080", matches: true, port: 8080),
        Case(host: "internal.example", list: "internal.example:8080", matches: false, port: 443),
        Case(host: "::1", list: "[::1]:8443", matches: true, port: 8443),
        Case(host: "::1", list: "[::1]:8443", matches: false, port: 443),
        Case(host: "10.0.0.7", list: "10.0.0.0/8:443", matches: true, port: 443),
        // Names never match address entries, and the reverse.
        Case(host: "localhost", list: "127.0.0.1", matches: false),
        Case(host: "127.0.0.1", list: "localhost", matches: false),
        Case(host: "example.com", list: "", matches: false),
        Case(host: "example.com", list: ".", matches: false),
    ]

    /// curl's table, then ports, wildcards and never a substring.
    @Test(arguments: curlCases + moreCases)
    func matching(_ c: Case) {
        #expect(NoProxyList(c.list).matches(host: c.host, port: c.port) == c.matches)
    }
}
