/// One request as a ``ProtocolPlugin`` sees it: what the loader would have written on a connection.
public struct ProtocolRequest: Sendable {
    public var method: HTTPMethod
    /// The absolute URL, in a scheme the plugin claims.
    public var url: HTTPURL
    /// The header fields the loader and its authoriser set (`User-Agent` included).
    public var headers: HTTPHeaders
    /// The request body (empty for none); read it once, chunk by chunk.
    public var body: ProtocolBody
    /// The address the request would connect to instead of the URL's host (a policy's fallback target, curl's
    /// `--connect-to`); nil for the URL's own host. A plugin that stands in for the network (a scripted transport)
    /// answers for this address; others ignore it.
    public var connectTo: HostAddress?

    public init(
        method: HTTPMethod = .get, url: HTTPURL, headers: HTTPHeaders = HTTPHeaders(), body: ProtocolBody = .empty,
        connectTo: HostAddress? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTo = connectTo
    }
}
