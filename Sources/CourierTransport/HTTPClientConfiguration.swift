import CourierCore
import CourierHTTP1

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
    public var parserLimits = ResponseParser.Limits()
    /// Bytes asked of the socket per read.
    public var readSize = 64 * 1024
    /// The `User-Agent` sent when a request has none; nil sends none.
    public var userAgent: String? = "Courier/0.1"

    public init() {}
}
