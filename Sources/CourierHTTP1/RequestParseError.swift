/// A request violated HTTP/1.1 framing (RFC 9112), one of ``RequestParser/Limits`` was exceeded, or the
/// connection ended inside a request. A server answers ``status`` and closes the connection: after this error the
/// bytes that follow cannot be trusted to start a request (a smuggling attempt looks exactly like that).
package struct RequestParseError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Hashable, Sendable {
        /// The request line is not `method SP request-target SP HTTP-version`.
        case invalidRequestLine
        /// The target is not origin form (`/path?query`), absolute form (`http://...`) or `*`.
        case invalidRequestTarget
        /// The version is not HTTP/1.x.
        case unsupportedVersion
        /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2).
        case missingHost
        /// More than one `Host` field (RFC 9112 §3.2).
        case multipleHosts
        /// The body is longer than the limit (bytes), as declared by `Content-Length` or as the chunks add up.
        case bodyTooLarge(limit: Int)
        /// The connection closed inside a request.
        case truncated
        /// A rule requests share with responses, in the response parser's words: a field (name, value, obs-fold,
        /// limits), `Content-Length` and `Transfer-Encoding` (both at once is `contentLengthWithTransferEncoding`),
        /// a chunk-size line or the CRLF after chunk data.
        case message(ResponseParseError.Reason)
    }

    package var reason: Reason
    /// The offset of the offending byte from the request's first byte, when useful.
    package var offset: Int?

    package init(_ reason: Reason, offset: Int? = nil) {
        self.reason = reason
        self.offset = offset
    }

    /// The status a server answers with: 431 for a head over its limits, 413 for a body over its limit, 501 for a
    /// transfer coding other than `chunked`, 505 for a version other than 1.x, 400 otherwise.
    package var status: Int {
        switch reason {
        case .message(.headTooLarge), .message(.tooManyHeaders): return 431
        case .bodyTooLarge: return 413
        case .message(.unsupportedTransferEncoding): return 501
        case .unsupportedVersion: return 505
        default: return 400
        }
    }

    package var description: String {
        let at = offset.map { " at byte \($0)" } ?? ""
        return "HTTP/1.1 request: \(message)\(at)"
    }

    private var message: String {
        switch reason {
        case .invalidRequestLine: return "invalid request line"
        case .invalidRequestTarget: return "invalid request target"
        case .unsupportedVersion: return "unsupported HTTP version (only HTTP/1.x)"
        case .missingHost: return "no Host field"
        case .multipleHosts: return "more than one Host field"
        case .bodyTooLarge(let limit): return "body exceeds \(limit) bytes"
        case .truncated: return "connection closed inside the request"
        case .message(let reason): return ResponseParseError(reason).message
        }
    }
}
