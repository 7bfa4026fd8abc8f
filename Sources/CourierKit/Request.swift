public import CourierCore
public import Logging

/// One request a ``DataLoader`` loads. Everything about how it is sent (rate limit, retries, fallbacks,
/// authoriser, timeouts) comes from the policy route of its URL; the fields here only override the route where
/// they say so.
public struct Request: Sendable {
    /// The absolute `http` or `https` URL, as text; an invalid URL fails the load with a typed error.
    public var url: String
    /// The request method (`GET` by default); the route's retry policy says which methods may be retried.
    public var method: HTTPMethod
    /// Header fields sent as given (the service's `User-Agent` is added unless set, and the authoriser's fields).
    public var headers: HTTPHeaders
    /// The body bytes (nil for none).
    public var body: [UInt8]?
    /// A body produced while it is sent, chunked; used instead of ``body`` when set.
    public var bodyStream: RequestBodyStream?
    /// Whether a delegate gets the body in chunks as they arrive (``DataLoaderDelegate/didReceiveDataChunk(_:for:)``)
    /// instead of whole in the final response; for large downloads. ``DataLoader/stream(_:)`` always delivers
    /// chunks and ``DataLoader/load(_:)`` always collects the body.
    public var deliversChunks: Bool
    /// Overrides the route's total deadline (every attempt and back-off included).
    public var timeout: Duration?
    /// Overrides the route's maximum number of attempts (the first included); at least 1.
    public var maxAttempts: Int?
    /// Free-form values for the app's own bookkeeping; the loader carries them to the response untouched.
    public var userInfo: [String: String]
    /// Which part of the app made the request (a feature or screen name), passed to the consumption observers
    /// so traffic can be accounted per feature.
    public var sourceIdentifier: String?
    /// Where this request's log lines go instead of the service's logger (AsyncHTTPClient's per-request logger),
    /// e.g. a server's request logger with its request id in the metadata. Courier logs nothing above `debug`
    /// for a request, and never a header, a body or a credential (docs/observability.md).
    public var logger: Logger? = nil
    /// The proxy this request goes through, whatever the policy's `proxy:`, the service's configuration and the
    /// environment say (curl's `-x` for one request); nil: as they say (docs/proxies.md).
    public var proxy: ProxyServer? = nil
    /// The client certificate this request presents to an https server that asks for one, instead of its
    /// service's `tls.client-certificate` (mutual TLS); connections are pooled per identity, so two requests with
    /// different identities never share one. nil: the service's, if any.
    public var clientIdentity: ClientIdentity? = nil

    /// A request for `url`; every other field defaults to "as the route says" (see each property).
    public init(
        url: String,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8]? = nil,
        bodyStream: RequestBodyStream? = nil,
        deliversChunks: Bool = false,
        timeout: Duration? = nil,
        maxAttempts: Int? = nil,
        userInfo: [String: String] = [:],
        sourceIdentifier: String? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.bodyStream = bodyStream
        self.deliversChunks = deliversChunks
        self.timeout = timeout
        self.maxAttempts = maxAttempts
        self.userInfo = userInfo
        self.sourceIdentifier = sourceIdentifier
    }
}
