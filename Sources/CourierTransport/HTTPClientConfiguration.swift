public import CourierCore
package import CourierHTTP1

/// How an ``HTTPClient`` behaves unless a request says otherwise.
public struct HTTPClientConfiguration: Sendable {
    /// Connections per pool key (origin and connect address), in any state. Requests beyond it wait in FIFO
    /// order.
    public var maxConnectionsPerHost = 8
    /// How long an unused kept-alive connection stays open.
    public var idleTimeout: Duration = .seconds(60)
    /// Connect, idle-read and total timeouts for requests that do not carry their own.
    public var timeouts = TimeoutPolicy.builtIn
    /// Redirects followed before failing with `too-many-redirects`.
    public var maxRedirects = 10
    /// The largest body ``HTTPClient/execute(_:)`` collects (after decoding); larger fails with
    /// `body-too-large`. Streaming has no limit but the decoder's.
    public var maxBodyBytes = 64 << 20
    /// The largest decoded size of a gzip/deflate body (a defence against decompression bombs).
    public var maxDecodedBytes = 256 << 20
    /// Limits on response heads and chunk framing.
    package var parserLimits = ResponseParser.Limits()
    /// Bytes asked of the socket per read through the parser (heads, chunked and close-delimited bodies, streamed
    /// bodies). The rest of a `Content-Length` body that ``HTTPClient/execute(_:)`` collects is received straight
    /// into the body's array, as much per read as the socket holds.
    public var readSize = 64 * 1024
    /// Whether ``HTTPClient/execute(_:)`` runs a request from a caller that is not on one of the client's loops
    /// with an event loop as its task executor, so a read waiting for the network resumes on the loop thread
    /// that saw the data. It trades one hop per response (loop thread to the caller's executor) for two per
    /// request (onto the loop and back). Off by default: at 64 requests in flight from the global executor it
    /// measured about 30 % fewer requests per second against Courier's minimal benchmark server and against
    /// nginx with two workers 10–15 % fewer, but up to 30 % more against nginx with one worker, so neither
    /// setting wins everywhere. A caller on a loop itself (see ``HTTPClient/eventLoopGroup``) uses the least CPU
    /// everywhere; such a caller's requests stay on its loop with or without this.
    public var runsRequestsOnEventLoop = false
    /// TLS settings for https origins whose request names none: by default the system's trust store (honouring
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`), TLS 1.2 or later, full verification, no pins.
    public var tls = TLSPolicy.builtIn
    /// The `User-Agent` sent when a request has none; nil sends none.
    public var userAgent: String? = "Courier/0.1"
    /// Sees each exchange's connection and heads as they go over the wire (`courier fetch -v`); nil: nothing is
    /// observed, at no cost.
    package var exchangeObserver: (any ExchangeObserver)?
    /// The plugins that answer URLs of their schemes instead of a connection (``ProtocolPlugin``):
    /// ``ProtocolRegistry/standard`` (`data:` only) by default. A request for a scheme no plugin claims that is not
    /// http(s) fails with `policy`.
    public var protocols = ProtocolRegistry.standard

    public init() {}
}
