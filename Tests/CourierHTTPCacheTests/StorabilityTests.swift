import CourierCore
import Testing

@testable import CourierHTTPCache

/// What a private cache may store (RFC 9111 §3, §3.5, §4.1; RFC 9110 §15.1).
@Suite struct StorabilityTests {
    private func verdict(
        _ method: HTTPMethod = .get, request: HTTPHeaders = [:], status: Int = 200, response: HTTPHeaders = [:]
    ) -> Storability {
        Storability(method: method, requestHeaders: request, status: status, responseHeaders: response)
    }

    /// RFC 9111 §3: only GET responses are stored; HEAD is not (decided: no content to reuse), nor unsafe ones.
    @Test(arguments: [HTTPMethod.head, .post, .put, .delete, .patch, .options, "PROPFIND"])
    func onlyGet(method: HTTPMethod) {
        #expect(verdict(method) == .notStorable(.method(method)))
        #expect(verdict(method, response: ["Cache-Control": "max-age=60"]) == .notStorable(.method(method)))
        #expect(verdict(.get, response: ["Cache-Control": "max-age=60"]) == .storable)
    }

    /// RFC 9110 §15.1: the heuristically cacheable statuses are storable without explicit freshness; 206 is
    /// excluded (no ranges here).
    @Test(arguments: [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501])
    func heuristicallyCacheableStatuses(status: Int) {
        #expect(verdict(status: status) == .storable)
    }

    /// RFC 9111 §3: other final statuses need explicit freshness (max-age or Expires).
    @Test(arguments: [201, 202, 302, 303, 307, 400, 403, 429, 500, 502, 503, 599])
    func otherStatusesNeedExplicitFreshness(status: Int) {
        #expect(verdict(status: status) == .notStorable(.noFreshness))
        #expect(verdict(status: status, response: ["Cache-Control": "max-age=10"]) == .storable)
        #expect(verdict(status: status, response: ["Expires": "Sun, 06 Nov 1994 08:49:37 GMT"]) == .storable)
        #expect(verdict(status: status, response: ["Expires": "0"]) == .storable, "present, though stale")
        #expect(verdict(status: status, response: ["Cache-Control": "private"]) == .notStorable(.noFreshness))
        #expect(verdict(status: status, response: ["Cache-Control": "public"]) == .notStorable(.noFreshness))
    }

    /// RFC 9111 §3: 1xx are not final; 206 (ranges not implemented) and 304 are never stored as such.
    @Test(arguments: [100, 101, 103, 206, 304])
    func neverStoredStatuses(status: Int) {
        #expect(verdict(status: status, response: ["Cache-Control": "max-age=60"]) == .notStorable(.status(status)))
    }

    /// RFC 9111 §5.2.1.5 and §5.2.2.5: no-store in the request or the response forbids storing.
    @Test func noStore() {
        #expect(verdict(request: ["Cache-Control": "no-store"]) == .notStorable(.requestNoStore))
        #expect(verdict(response: ["Cache-Control": "max-age=60, no-store"]) == .notStorable(.responseNoStore))
        #expect(verdict(response: HTTPHeaders([("Cache-Control", "max-age=60"), ("Cache-Control", "NO-STORE")]))
            == .notStorable(.responseNoStore))
        #expect(verdict(response: ["Cache-Control": #"x="no-store""#]) == .storable, "quoted, not a directive")
    }

    /// RFC 9111 §5.2.2.7: `private` is storable by a private cache, qualified or not.
    @Test func privateIsStorable() {
        #expect(verdict(response: ["Cache-Control": "private, max-age=60"]) == .storable)
        #expect(verdict(response: ["Cache-Control": #"private="Set-Cookie""#]) == .storable)
    }

    /// RFC 9111 §3.5: with `Authorization`, only public, must-revalidate or s-maxage permit storing.
    @Test(arguments: [
        ("max-age=60", false), ("private, max-age=60", false), ("", false), ("no-cache", false),
        ("proxy-revalidate, max-age=60", false),
        ("public", true), ("must-revalidate", true), ("s-maxage=0", true), ("max-age=60, PUBLIC", true),
    ] as [(String, Bool)])
    func authorization(cacheControl: String, storable: Bool) {
        let response: HTTPHeaders = cacheControl.isEmpty ? [:] : ["Cache-Control": cacheControl]
        let result = verdict(request: ["authorization": "Bearer x"], response: response)
        #expect(result == (storable ? .storable : .notStorable(.authorization)), "\(cacheControl)")
        #expect(verdict(response: response) == .storable, "without Authorization it is storable")
    }

    /// RFC 9111 §4.1: `Vary: *` never matches a later request, so it is not stored.
    @Test func varyAll() {
        #expect(verdict(response: ["Vary": "*"]) == .notStorable(.varyAll))
        #expect(verdict(response: ["Vary": "Accept, *"]) == .notStorable(.varyAll))
        #expect(verdict(response: ["Vary": "Accept-Encoding"]) == .storable)
    }

    /// RFC 9111 §5.2.2.3: must-understand stores only statuses the cache understands.
    @Test func mustUnderstand() {
        #expect(verdict(status: 200, response: ["Cache-Control": "must-understand, no-store"]) == .notStorable(.responseNoStore))
        #expect(verdict(status: 200, response: ["Cache-Control": "must-understand"]) == .storable)
        #expect(verdict(status: 299, response: ["Cache-Control": "must-understand, max-age=9"]) == .notStorable(.mustUnderstand))
        #expect(verdict(status: 299, response: ["Cache-Control": "max-age=9"]) == .storable)
    }

    @Test func isStorable() {
        #expect(Storability.storable.isStorable)
        #expect(!Storability.notStorable(.varyAll).isStorable)
    }
}
