public import CourierCore

/// The head of the response an attempt got, delivered before its body by the streaming and delegate APIs.
public struct ResponseHead: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The status line's reason phrase (informative only; may be empty).
    public var reason: String
    /// The response's header fields.
    public var headers: HTTPHeaders
    /// The URL that answered (after redirects).
    public var url: HTTPURL
    /// Which attempt this is (1 for the first). A head with a higher attempt number than one seen before
    /// means the earlier attempt's body was cut off and this one starts the body again from its first byte.
    public var attempt: Int

    /// A head with the given fields (for tests and delegates of your own).
    public init(status: Int, reason: String = "", headers: HTTPHeaders, url: HTTPURL, attempt: Int) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.url = url
        self.attempt = attempt
    }
}
