/// A ``ProtocolPlugin``'s answer: a final response head and its body.
public struct ProtocolResponse: Sendable {
    /// A final status, 200...599 (anything else fails the request with `protocol-plugin`).
    public var status: Int
    /// The reason phrase (may be empty).
    public var reason: String
    /// The header fields. `Content-Length`, when present, is what a caller learns of the size in advance; the
    /// transport does not check the body against it.
    public var headers: HTTPHeaders
    /// The body, read once by the transport as the caller consumes it.
    public var body: ProtocolBody

    public init(status: Int, reason: String = "", headers: HTTPHeaders = HTTPHeaders(), body: ProtocolBody = .empty) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }
}
