import CourierCore
import Testing

@testable import CourierHTTPCache

/// Invalidation by unsafe methods (RFC 9111 §4.4; RFC 9110 §9.2.1).
@Suite struct InvalidationTests {
    static let target = HTTPURL("https://api.example.com/v1/items/7?x=1")!

    private func urls(_ method: HTTPMethod = .post, status: Int = 200, _ headers: HTTPHeaders = [:]) -> [String] {
        Invalidation.urls(method: method, url: Self.target, status: status, responseHeaders: headers).map(\.description)
    }

    /// RFC 9110 §9.2.1: safe methods invalidate nothing; unsafe ones (known or not) the target.
    @Test(arguments: [
        (HTTPMethod.get, false), (.head, false), (.options, false), (.trace, false),
        (.post, true), (.put, true), (.delete, true), (.patch, true), ("PROPPATCH", true),
    ] as [(HTTPMethod, Bool)])
    func methods(method: HTTPMethod, invalidates: Bool) {
        #expect(Invalidation.isUnsafe(method) == invalidates)
        #expect(urls(method) == (invalidates ? [Self.target.description] : []))
    }

    /// RFC 9111 §4.4: only a non-error (2xx, 3xx) response invalidates.
    @Test(arguments: [(200, true), (204, true), (303, true), (399, true), (400, false), (404, false), (500, false), (199, false)])
    func statuses(status: Int, invalidates: Bool) {
        #expect(urls(status: status).isEmpty == !invalidates)
    }

    /// RFC 9111 §4.4: Location and Content-Location, resolved, when same-origin only.
    @Test(arguments: [
        (["Location": "/v1/items"], ["https://api.example.com/v1/items"]),
        (["Content-Location": "8"], ["https://api.example.com/v1/items/8"]),
        (["Location": "https://api.example.com:443/a", "Content-Location": "/b"],
         ["https://api.example.com:443/a", "https://api.example.com/b"]),
        (["Location": "https://API.example.com/a"], ["https://api.example.com/a"]),
        (["Location": "https://other.example.com/a"], []),
        (["Location": "http://api.example.com/a"], []),  // other scheme: other origin
        (["Location": "https://api.example.com:8443/a"], []),  // other port
        (["Location": "//evil.example/a"], []),
        (["Location": "mailto:x@example.com"], []),
        (["Location": "?x=1"], []),  // the target itself: not repeated
        (["Location": "/same", "Content-Location": "/same"], ["https://api.example.com/same"]),
    ] as [(HTTPHeaders, [String])])
    func relatedURLs(headers: HTTPHeaders, extra: [String]) {
        #expect(urls(.post, headers) == [Self.target.description] + extra, "\(headers)")
    }
}
