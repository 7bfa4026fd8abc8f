internal import CourierCore

/// What ``RequestParser`` reports, in order for each request: its head, its body in slices, its end.
package enum RequestEvent: Hashable, Sendable {
    /// The request line and the header fields as received (framing fields included), and the version.
    case head(HTTPRequestHead, version: HTTPVersion)
    /// Body bytes (chunk framing removed), slices of the fed bytes.
    case body(ArraySlice<UInt8>)
    /// The request is complete. With `keepAlive` the next request may follow on the connection; without it
    /// (`Connection: close`, HTTP/1.0) the parser reads nothing more.
    case end(keepAlive: Bool)
}
