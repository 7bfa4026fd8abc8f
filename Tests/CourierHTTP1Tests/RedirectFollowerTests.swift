import CourierCore
import CourierHTTP1
import Testing

/// The one place redirects are decided, for the client and the loader: the limit, credentials across origins,
/// bodies that cannot be resent, and bad `Location`s, each a typed error.
@Suite struct RedirectFollowerTests {
    let url = HTTPURL("https://api.example.com/v1/items?page=2")!

    var credentialed: HTTPHeaders {
        var h = HTTPHeaders()
        h.add(name: "Authorization", value: "Bearer secret")
        h.add(name: "Cookie", value: "session=1")
        h.add(name: "Content-Type", value: "application/json")
        h.add(name: "Accept", value: "application/json")
        return h
    }

    @Test func aSameOriginRedirectKeepsTheCredentialsAndCountsOnlyWhenFollowed() throws {
        var follower = RedirectFollower(limit: 2)
        let hop = try #require(try follower.next(
            status: 302, location: "/v2/items", method: .get, url: url, headers: credentialed, bodyReplayable: true
        ))
        #expect(hop.url.description == "https://api.example.com/v2/items")
        #expect(hop.headers["authorization"] == "Bearer secret")
        #expect(!hop.isCrossOrigin)
        #expect(follower.followed == 0)
        follower.follow()
        #expect(follower.followed == 1)
    }

    @Test func aCrossOriginRedirectDropsCredentialsAndAPostBecomesAGetWithoutItsBody() throws {
        let follower = RedirectFollower(limit: 5)
        let hop = try #require(try follower.next(
            status: 302, location: "https://cdn.example.net/items", method: .post, url: url, headers: credentialed,
            bodyReplayable: true
        ))
        #expect(hop.isCrossOrigin)
        #expect(hop.method == .get)
        #expect(!hop.keepsBody)
        #expect(hop.headers["authorization"] == nil)
        #expect(hop.headers["cookie"] == nil)
        #expect(hop.headers["content-type"] == nil)
        #expect(hop.headers["accept"] == "application/json")
        // Another port is another origin too.
        let port = try #require(try follower.next(
            status: 307, location: "https://api.example.com:8443/v1", method: .get, url: url, headers: credentialed,
            bodyReplayable: true
        ))
        #expect(port.isCrossOrigin)
        #expect(port.headers["authorization"] == nil)
    }

    @Test func theLimitIsEnforcedAndZeroFollowsNone() throws {
        var follower = RedirectFollower(limit: 1)
        _ = try follower.next(status: 301, location: "/a", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true)
        follower.follow()
        #expect(throws: CourierError.self) {
            try follower.next(status: 301, location: "/b", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true)
        }
        do {
            _ = try follower.next(status: 301, location: "/b", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true)
        } catch {
            #expect(error.kind == .tooManyRedirects)
            #expect(error.message == "more than 1 redirects")
        }
        let none = RedirectFollower(limit: 0)
        #expect(try none.next(status: 302, location: "/a", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true) == nil)
    }

    @Test func notARedirectOrAnEmptyLocationIsTheAnswer() throws {
        let follower = RedirectFollower(limit: 3)
        for status in [200, 300, 304, 305, 404] {
            #expect(try follower.next(status: status, location: "/x", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true) == nil)
        }
        #expect(try follower.next(status: 302, location: "  ", method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true) == nil)
    }

    @Test func aMissingOrUnusableLocationIsAProtocolError() {
        let follower = RedirectFollower(limit: 3)
        for location in [nil, "ftp://example.com/file", "http://exa mple.com/"] as [String?] {
            do {
                _ = try follower.next(status: 302, location: location, method: .get, url: url, headers: HTTPHeaders(), bodyReplayable: true)
                Issue.record("\(String(describing: location)) was followed")
            } catch {
                #expect(error.kind == .protocol)
                #expect(error.cause is RedirectError)
            }
        }
    }

    @Test func a307ThatMustResendAStreamedBodyIsRefusedBeforeAnythingIsSent() {
        let follower = RedirectFollower(limit: 3)
        do {
            _ = try follower.next(status: 307, location: "/upload", method: .put, url: url, headers: HTTPHeaders(), bodyReplayable: false)
            Issue.record("a streamed body was to be resent")
        } catch {
            #expect(error.kind == .policy)
        }
        // A 303 drops the body, so a streamed one is no obstacle.
        #expect((try? follower.next(status: 303, location: "/done", method: .put, url: url, headers: HTTPHeaders(), bodyReplayable: false))??.method == .get)
    }
}
