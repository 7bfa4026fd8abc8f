package import CourierCore

/// What ``ResponseParser`` reports, in order: one ``head(_:)``, zero or more ``body(_:)``, at most one
/// ``trailers(_:)`` (chunked bodies only, when the trailer section is not empty), then ``end(keepAlive:)``.
package enum ResponseEvent: Hashable, Sendable {
    /// The final response's head (1xx interim responses are skipped and never reported).
    case head(HTTPResponseHead)
    /// A run of body bytes, in order. The slice shares storage with the bytes that were fed: no copy is made.
    case body(ArraySlice<UInt8>)
    /// The trailer fields of a chunked body.
    case trailers(HTTPHeaders)
    /// The message is complete. `keepAlive` tells whether the connection may carry another request
    /// (HTTP/1.1 without `Connection: close`, and a body that was not delimited by the connection closing).
    case end(keepAlive: Bool)
}
