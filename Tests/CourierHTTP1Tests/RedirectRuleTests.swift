import CourierCore
import CourierHTTP1
import Testing

@Suite struct RedirectRuleTests {
    let base = HTTPURL("https://api.example.com/v1/items?page=2")!

    func next(_ status: Int, _ method: HTTPMethod, _ location: String?) throws -> Redirect? {
        try RedirectRule.next(status: status, method: method, url: base, location: location)
    }

    @Test func seeOtherBecomesGetWithoutBody() throws {
        let post = try #require(try next(303, .post, "/done"))
        #expect(post.method == .get)
        #expect(!post.keepsBody)
        #expect(post.url.description == "https://api.example.com/done")
        #expect(!post.isCrossOrigin)
        let put = try #require(try next(303, .put, "/done"))
        #expect(put.method == .get)
        let head = try #require(try next(303, .head, "/done"))
        #expect(head.method == .head)
        #expect(!head.keepsBody)
    }

    @Test func movedAndFoundTurnPostIntoGetOnly() throws {
        for status in [301, 302] {
            let post = try #require(try next(status, .post, "other"))
            #expect(post.method == .get)
            #expect(!post.keepsBody)
            #expect(post.url.description == "https://api.example.com/v1/other")
            let put = try #require(try next(status, .put, "other"))
            #expect(put.method == .put)
            #expect(put.keepsBody)
            let get = try #require(try next(status, .get, "other"))
            #expect(get.method == .get)
        }
    }

    @Test func temporaryAndPermanentKeepMethodAndBody() throws {
        for status in [307, 308] {
            let post = try #require(try next(status, .post, "https://api.example.com/v2/items"))
            #expect(post.method == .post)
            #expect(post.keepsBody)
            #expect(post.url.path == "/v2/items")
        }
    }

    @Test func otherStatusesAreNotFollowed() throws {
        for status in [200, 300, 304, 305, 306, 399, 404] {
            #expect(try next(status, .get, "/x") == nil)
        }
    }

    @Test func anEmptyLocationIsNotFollowed() throws {
        // curl's behaviour: the 3xx itself is the answer.
        for status in RedirectRule.redirectStatuses.sorted() {
            #expect(try next(status, .get, "") == nil, "\(status)")
            #expect(try next(status, .post, " \t ") == nil, "\(status)")
        }
    }

    @Test func missingOrInvalidLocation() {
        #expect(throws: RedirectError(.missingLocation, status: 302)) { try next(302, .get, nil) }
        #expect(throws: RedirectError(.invalidLocation("ftp://example.com/"), status: 302)) { try next(302, .get, "ftp://example.com/") }
        #expect(throws: RedirectError(.invalidLocation("/a b"), status: 307)) { try next(307, .get, "/a b") }
        #expect(throws: RedirectError(.invalidLocation("javascript:alert(1)"), status: 302)) {
            try next(302, .get, "javascript:alert(1)")
        }
    }

    @Test func crossOriginDropsCredentials() throws {
        let headers: HTTPHeaders = [
            "Authorization": "Bearer secret", "Cookie": "s=1", "Proxy-Authorization": "Basic x", "Accept": "*/*",
            "Host": "api.example.com", "Content-Type": "application/json",
        ]
        let other = try #require(try next(307, .post, "https://cdn.example.net/blob"))
        #expect(other.isCrossOrigin)
        #expect(other.headers(from: headers) == ["Accept": "*/*", "Content-Type": "application/json"])
        let otherPort = try #require(try next(302, .get, "https://api.example.com:8443/x"))
        #expect(otherPort.isCrossOrigin)
        let sameOrigin = try #require(try next(302, .post, "//api.example.com/x"))
        #expect(!sameOrigin.isCrossOrigin)
        // Same origin keeps credentials; the dropped body takes its content fields with it.
        #expect(sameOrigin.headers(from: headers) == [
            "Authorization": "Bearer secret", "Cookie": "s=1", "Proxy-Authorization": "Basic x", "Accept": "*/*",
        ])
    }

    @Test func downgradeIsAllowedButFlagged() throws {
        let down = try #require(try next(301, .get, "http://api.example.com/v1/items"))
        #expect(down.isDowngrade)
        #expect(down.isCrossOrigin)  // the scheme and port differ
        let up = try #require(
            try RedirectRule.next(status: 301, method: .get, url: HTTPURL("http://a.example/")!, location: "https://a.example/")
        )
        #expect(!up.isDowngrade)
    }
}
