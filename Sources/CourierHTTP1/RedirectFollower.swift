package import CourierCore

/// The one place a redirect is decided, for ``HTTPClient``'s `execute` and `stream` and for the data loader alike:
/// whether a response is a redirect to follow, where it leads (RFC 9110 §15.4's method rules, ``RedirectRule``),
/// what the next hop may keep of the previous request (no credentials across origins, no content fields without
/// the body), and the limit. Pure: a response's status and `Location` in, the next hop or a typed failure out.
package struct RedirectFollower: Sendable {
    /// How many redirects may be followed; 0 follows none (every 3xx is the answer).
    package let limit: Int
    /// How many have been followed so far.
    package private(set) var followed = 0

    package init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// The next request after a `status` response to `method url` (sent with `headers`), or nil when the response
    /// is the answer: not a followed redirect, an empty `Location`, or a limit of 0. The hop counts once its
    /// owner follows it (``follow()``): a response that is retried instead is no redirect followed.
    ///
    /// - Parameter bodyReplayable: whether the request's body can be sent again; a 307 or 308 that keeps an
    ///   unreplayable body cannot be followed.
    /// - Throws: `too-many-redirects` past the limit; `protocol` for a redirect without a usable `Location`;
    ///   `policy` for a body that cannot be resent.
    package func next(
        status: Int, location: @autoclosure () -> String?, method: HTTPMethod, url: HTTPURL,
        headers: @autoclosure () -> HTTPHeaders, bodyReplayable: Bool
    ) throws(CourierError) -> Hop? {
        // Most responses are no redirect: nothing else is looked at for them.
        guard limit > 0, Self.isFollowed(status) else { return nil }
        let redirect: Redirect
        do {
            guard let next = try RedirectRule.next(status: status, method: method, url: url, location: location()) else { return nil }
            redirect = next
        } catch {
            throw CourierError(.protocol, "the server sent a bad redirect", url: url.description, cause: error)
        }
        guard followed < limit else {
            throw CourierError(.tooManyRedirects, "more than \(limit) redirects", url: url.description)
        }
        guard !redirect.keepsBody || bodyReplayable else {
            throw CourierError(
                .policy, "a \(status) redirect asks to resend a streamed body, which cannot be replayed", url: url.description
            )
        }
        return Hop(
            method: redirect.method, url: redirect.url, headers: redirect.headers(from: headers()),
            keepsBody: redirect.keepsBody, isCrossOrigin: redirect.isCrossOrigin
        )
    }

    /// Whether `status` is one ``RedirectRule`` follows (301, 302, 303, 307, 308), without hashing it.
    private static func isFollowed(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// Counts a hop ``next(status:location:method:url:headers:bodyReplayable:)`` gave as followed.
    package mutating func follow() {
        followed += 1
    }

    /// The request a followed redirect makes.
    package struct Hop: Sendable, Equatable {
        package var method: HTTPMethod
        package var url: HTTPURL
        /// The previous request's fields as the next hop may send them (``Redirect/headers(from:)``).
        package var headers: HTTPHeaders
        /// Whether the previous body is sent again (307/308, or a method that was kept).
        package var keepsBody: Bool
        /// Whether the hop leaves the previous request's origin (scheme, host or port).
        package var isCrossOrigin: Bool
    }
}
