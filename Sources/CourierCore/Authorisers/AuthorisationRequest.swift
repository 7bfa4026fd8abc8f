/// The parts of an outgoing request an ``Authoriser`` may read and change: it adds header fields or query
/// items; it never changes the method or the body.
public struct AuthorisationRequest: Sendable {
    /// The request method (read only by authorisers that sign it).
    public var method: HTTPMethod
    /// The URL the request goes to; an authoriser may add query items (``HTTPURL/query``).
    public var url: HTTPURL
    /// The request's header fields; an authoriser adds its own here.
    public var headers: HTTPHeaders
    /// The body when it is known up front (nil for no body or a streamed one); used for signatures.
    public var body: [UInt8]?
    /// Whether the body is streamed as it is sent (``body`` is nil then, though the request has one): an
    /// authoriser that signs the body must refuse such a request rather than sign the wrong bytes.
    public var hasStreamedBody: Bool

    public init(
        method: HTTPMethod = .get, url: HTTPURL, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8]? = nil,
        hasStreamedBody: Bool = false
    ) {
        self.hasStreamedBody = hasStreamedBody
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
