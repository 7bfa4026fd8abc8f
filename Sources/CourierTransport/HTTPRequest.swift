public import CourierCore
internal import CourierHTTP1

/// One HTTP request for ``HTTPClient``.
public struct HTTPRequest: Sendable {
    /// The request's body.
    public enum Body: Sendable {
        case none
        /// A body of known length, sent with `Content-Length`; it can be sent again for a retry or redirect.
        case bytes([UInt8])
        /// A streamed body of unknown length, sent chunked. It can be sent only once: a 307/308 redirect or a
        /// retry of such a request fails instead of sending a partial body.
        /// Indirect: `AsyncThrowingStream` is not frozen, and as a plain payload it would make every `HTTPRequest` a
        /// value of non-fixed size to the compiler (see `Deadline`).
        indirect case stream(AsyncThrowingStream<[UInt8], any Error>)
        /// A streamed body whose length is known (a multipart form of files), sent with `Content-Length`: a stream
        /// that ends early or runs long fails the request (the encoder checks), never sending a body that looks
        /// whole. Sent once, as ``stream(_:)``.
        indirect case sizedStream(length: Int, AsyncThrowingStream<[UInt8], any Error>)

        var isReplayable: Bool {
            switch self {
            case .stream, .sizedStream: return false
            case .none, .bytes: return true
            }
        }
    }

    public var method: HTTPMethod
    public var url: HTTPURL
    /// Header fields; `Host`, `Content-Length`, `Transfer-Encoding` are written by the client.
    public var headers: HTTPHeaders
    public var body: Body
    /// Overrides the client's timeouts for this request.
    public var timeouts: TimeoutPolicy?
    /// Overrides the client's redirect limit (0 = do not follow redirects).
    public var maxRedirects: Int?
    /// Connect to this address instead of the URL's host, keeping the `Host` header (and later the TLS server
    /// name) of the URL: curl's `--connect-to`. Used for fallback hosts.
    public var connectTo: HostAddress?
    /// Connect to the Unix domain socket at this path instead of the URL's host (curl's `--unix-socket`), keeping
    /// the URL's host for the `Host` header (and the TLS server name of an https URL). Connections are pooled per
    /// socket path. ``init(method:unixSocketURL:headers:body:)`` reads the `http+unix://` form.
    public var unixSocketPath: String?
    /// Whether to send `Accept-Encoding: gzip, deflate` (unless set) and decode such responses.
    public var decompress: Bool
    /// The `User-Agent` to send unless ``headers`` has one; nil uses ``HTTPClientConfiguration/userAgent``, and
    /// an empty one sends none. The client adds the field in one place, for every request and redirect hop.
    public var userAgent: String?
    /// TLS settings for this request's origin (an https URL); nil uses ``HTTPClientConfiguration/tls``. They
    /// apply to this origin only: a redirect to another origin uses the client's. (The data loader follows
    /// redirects itself and gives each hop its own service's settings.)
    public var tls: TLSPolicy?
    /// Settings a route adds to the client's (``TLSPolicy/overlaid(on:)``: never weaker than them) when ``tls`` is
    /// nil: the data loader's, whose routes name their own.
    package var tlsOverlay: TLSPolicy?
    /// The proxy to go through (nil: connect directly): plain http is sent to an HTTP proxy in absolute form with
    /// its `Proxy-Authorization`, https goes through a `CONNECT` tunnel (or SOCKS5) with TLS to the origin inside.
    /// Kept across redirects. (The data loader sets it per hop from its ``ProxySelection``.)
    public var proxy: ProxyServer?
    /// When set, decides the proxy of every hop by its URL (explicit, environment and `no_proxy`, as curl does)
    /// instead of ``proxy``: `courier fetch` without a policy.
    package var proxySelection: ProxySelection?
    /// The protocol plugins that answer this request instead of a connection when one claims its scheme; nil uses
    /// ``HTTPClientConfiguration/protocols``. (The data loader sets its service's.)
    package var protocols: ProtocolRegistry?

    public init(
        method: HTTPMethod = .get,
        url: HTTPURL,
        headers: HTTPHeaders = HTTPHeaders(),
        body: Body = .none,
        timeouts: TimeoutPolicy? = nil,
        maxRedirects: Int? = nil,
        connectTo: HostAddress? = nil,
        decompress: Bool = true,
        userAgent: String? = nil,
        tls: TLSPolicy? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
        self.maxRedirects = maxRedirects
        self.connectTo = connectTo
        self.decompress = decompress
        self.userAgent = userAgent
        self.tls = tls
    }
}

extension HTTPRequest {
    /// The request a followed redirect makes: the hop's method, URL and fields; another origin gets neither this
    /// origin's connect address nor its TLS settings; a dropped body is dropped.
    func following(_ hop: RedirectFollower.Hop) -> HTTPRequest {
        var next = self
        next.method = hop.method
        next.url = hop.url
        next.headers = hop.headers
        if hop.isCrossOrigin {
            next.connectTo = nil
            next.unixSocketPath = nil
            next.tls = nil
            next.tlsOverlay = nil
        }
        if !hop.keepsBody { next.body = .none }
        return next
    }
}
