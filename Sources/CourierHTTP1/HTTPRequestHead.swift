package import CourierCore

/// The head of an HTTP/1.1 request: method, request target and header fields.
///
/// The framing headers (`Content-Length`, `Transfer-Encoding`) are not part of it: ``RequestEncoder`` writes
/// them from the ``RequestBodyFraming`` it is given, so the head and the body can never disagree.
package struct HTTPRequestHead: Hashable, Sendable {
    package var method: HTTPMethod
    /// The request target in origin form (`/path?query`), or `*` / absolute form when the caller needs it.
    package var target: String
    package var headers: HTTPHeaders

    package init(method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.headers = headers
    }

    /// A head for `url`: the target is the URL's path and query (origin form).
    package init(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders = HTTPHeaders()) {
        self.init(method: method, target: url.requestTarget, headers: headers)
    }
}
