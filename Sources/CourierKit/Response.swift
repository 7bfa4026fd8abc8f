public import CourierCore

/// What a ``DataLoader`` returns for a request that got an HTTP response. A non-2xx status is a response too
/// (after the route's retries); only failures with no response at all are thrown.
public struct Response: Sendable {
    /// The HTTP status code of the final response.
    public var status: Int
    /// The status line's reason phrase as the server sent it (informative only; may be empty).
    public var reason: String = ""
    /// The final response's header fields.
    public var headers: HTTPHeaders
    /// The body, decoded when it was compressed (empty for a stream, whose chunks were delivered instead).
    public var body: [UInt8]
    /// The URL of the final response (after redirects).
    public var url: HTTPURL
    /// Attempts made, the first included (a 401 refresh retry counts too).
    public var attempts: Int
    /// The delay the last `Retry-After` header asked for, capped by the policy (nil when none was sent).
    public var retryAfter: Duration?
    /// The connect targets tried, in order, over all attempts: `host:port` of the URL itself or of a fallback.
    public var addressesTried: [String]
    /// When each phase of the load happened (queued, waits, first byte, end).
    public var timeline: ResponseTimeline
    /// Bytes written to the wire, headers included, summed over attempts.
    public var bytesSent: Int64
    /// Bytes read from the wire, headers included, summed over attempts.
    public var bytesReceived: Int64
    /// Redirects followed on the way to this response.
    public var redirects: Int
    /// The request's ``Request/userInfo``.
    public var userInfo: [String: String]
    /// How the HTTP cache took part (nil when the route's service does not cache).
    public var cache: CacheStatus? = nil
    /// What the load did on the way to this response: its attempts and how each ended, the waits it took and why,
    /// its authoriser's refreshes (``LoadReport``).
    public var report = LoadReport()
    /// The version on the final response's status line (`HTTP/1.0`, `HTTP/1.1`), for `courier fetch -i`; a
    /// stored response answered from the cache says `HTTP/1.1`.
    package var httpVersion = "HTTP/1.1"

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// An `http-status` error for a 4xx or 5xx status (after the route's retries), nil otherwise: what a
    /// delegate's error callback gets with the response.
    public var error: CourierError? {
        guard status >= 400 else { return nil }
        return CourierError(.httpStatus, "the server answered \(status)", url: url.description)
    }
}
