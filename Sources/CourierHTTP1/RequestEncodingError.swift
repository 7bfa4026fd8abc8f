/// A request could not be encoded. Thrown before any byte of the offending head is written.
package struct RequestEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    package enum Reason: Hashable, Sendable {
        /// The method is not an RFC 9110 token.
        case invalidMethod(String)
        /// The request target is empty or holds a space, a control byte or a non-ASCII byte.
        case invalidTarget(String)
        /// A header field name that is not a token.
        case invalidHeaderName(String)
        /// A header field value holding CR, LF or NUL (the value is not repeated: it may be a secret).
        case invalidHeaderValue(name: String)
        /// The host for the `Host` header is empty or holds CR, LF, NUL or whitespace.
        case invalidHost(String)
        /// The caller set `Content-Length` or `Transfer-Encoding`; the encoder writes framing itself.
        case framingHeaderSupplied(String)
        /// More body bytes than the declared `Content-Length`.
        case bodyLongerThanDeclared(declared: Int)
        /// The body ended before the declared `Content-Length`.
        case bodyShorterThanDeclared(declared: Int, written: Int)
        /// Body bytes for a request declared without a body.
        case bodyWithoutFraming
        /// Trailers for a body that is not chunked.
        case trailersWithoutChunkedBody
        /// A negative `Content-Length`.
        case negativeContentLength(Int)
    }

    package var reason: Reason

    package init(_ reason: Reason) { self.reason = reason }

    package var description: String {
        switch reason {
        case .invalidMethod(let m): return "invalid request method \(m.debugDescription)"
        case .invalidTarget(let t): return "invalid request target \(t.debugDescription)"
        case .invalidHeaderName(let n): return "invalid header field name \(n.debugDescription)"
        case .invalidHeaderValue(let n): return "header field \(n.debugDescription) has CR, LF or NUL in its value"
        case .invalidHost(let h): return "invalid Host \(h.debugDescription)"
        case .framingHeaderSupplied(let n): return "\(n) is written by the encoder from the body framing; do not set it"
        case .bodyLongerThanDeclared(let d): return "request body longer than its Content-Length \(d)"
        case .bodyShorterThanDeclared(let d, let w): return "request body ended after \(w) of \(d) declared bytes"
        case .bodyWithoutFraming: return "request body bytes for a request without a body"
        case .trailersWithoutChunkedBody: return "trailers need a chunked request body"
        case .negativeContentLength(let n): return "negative Content-Length \(n)"
        }
    }
}
