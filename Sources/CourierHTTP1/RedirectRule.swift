package import CourierCore

/// Where a redirect leads: the next request's method, URL and what it may keep from the previous one.
package struct Redirect: Hashable, Sendable {
    /// The method of the next request.
    package var method: HTTPMethod
    /// The next request's URL (`Location` resolved against the current URL).
    package var url: HTTPURL
    /// Whether the next request re-sends the previous body (307/308, or a method that was not changed).
    package var keepsBody: Bool
    /// The next hop has another scheme, host or port than the current one.
    package var isCrossOrigin: Bool
    /// The redirect goes from https to http. Allowed, but callers may refuse or report it.
    package var isDowngrade: Bool

    /// Fields never sent to another origin than the one they were given for.
    package static let credentialFields = ["Authorization", "Cookie", "Proxy-Authorization"]
    /// Fields that describe the body, removed when the body is dropped (as the Fetch standard does).
    package static let contentFields = ["Content-Type", "Content-Encoding", "Content-Language", "Content-Location"]

    /// `headers` as they should be sent on the next hop: without credentials on a cross-origin hop and without
    /// content fields when the body is dropped. `Host` is removed too: the encoder writes the new one.
    package func headers(from headers: HTTPHeaders) -> HTTPHeaders {
        var result = headers
        result.remove(name: "Host")
        if isCrossOrigin {
            for name in Redirect.credentialFields { result.remove(name: name) }
        }
        if !keepsBody {
            for name in Redirect.contentFields { result.remove(name: name) }
        }
        return result
    }
}

/// RFC 9110 §15.4 redirect rules, pure: status, method and `Location` in, the next request out.
///
/// - 303 See Other: `GET` without a body (a `HEAD` stays `HEAD`).
/// - 301 and 302: `POST` becomes `GET` without a body, as browsers and curl do (RFC 9110 allows it for
///   historical reasons); every other method is kept with its body.
/// - 307 and 308: method and body kept.
/// - Other statuses (300, 304, 305, ...) are not redirects to follow: `nil`.
/// - An empty `Location` (nothing but whitespace) points nowhere: `nil`, so the 3xx response itself is the
///   answer, as curl does.
///
/// The number of hops is counted by the caller.
package enum RedirectRule {
    /// The statuses that are followed.
    package static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The next request for a `status` response to a `method` request for `url`, or nil when the status is not
    /// a followed redirect or `location` is empty. Throws when `location` is missing or does not resolve to an
    /// http(s) URL.
    package static func next(
        status: Int,
        method: HTTPMethod,
        url: HTTPURL,
        location: String?
    ) throws(RedirectError) -> Redirect? {
        guard redirectStatuses.contains(status) else { return nil }
        guard let location else { throw RedirectError(.missingLocation, status: status) }
        let trimmed = String(location.trimmingHTTPWhitespace)
        guard !trimmed.isEmpty else { return nil }
        guard let target = url.resolving(trimmed) else { throw RedirectError(.invalidLocation(location), status: status) }

        let nextMethod: HTTPMethod
        switch status {
        case 303:
            nextMethod = method == .head ? .head : .get
        case 301, 302:
            nextMethod = method == .post ? .get : method
        default:
            nextMethod = method
        }
        let keepsBody = status != 303 && nextMethod == method
        return Redirect(
            method: nextMethod,
            url: target,
            keepsBody: keepsBody,
            isCrossOrigin: target.scheme != url.scheme || target.host != url.host || target.port != url.port,
            isDowngrade: url.scheme == "https" && target.scheme == "http"
        )
    }
}
