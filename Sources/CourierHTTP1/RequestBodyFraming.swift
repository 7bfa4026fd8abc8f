/// How a request body is delimited on the wire (RFC 9112 §6).
package enum RequestBodyFraming: Hashable, Sendable {
    /// No body. `POST`, `PUT` and `PATCH` still get `Content-Length: 0` (RFC 9110 §8.6: the method defines a
    /// meaning for content, so its absence is stated).
    case none
    /// A body of exactly this many bytes: `Content-Length`.
    case contentLength(Int)
    /// A streamed body of unknown length: `Transfer-Encoding: chunked`.
    case chunked
}
