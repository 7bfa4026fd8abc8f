public import CourierTLS

/// What one request cost: wire bytes and a timeline. Byte counts include request and response heads, chunk
/// framing and every redirect hop and retry, as HTTP/1.1 put them on the connection (before decompression; for https
/// the plaintext, without TLS records).
public struct RequestMetrics: Hashable, Sendable {
    /// Bytes written to the network for this request (heads and bodies of every hop and attempt).
    public package(set) var bytesSent: Int64 = 0
    /// Bytes read from the network for this request (heads, bodies and framing of every hop and attempt).
    public package(set) var bytesReceived: Int64 = 0
    /// Time spent resolving the host; nil when a pooled connection was reused.
    public package(set) var dns: Duration?
    /// Time spent on the TCP handshake(s); nil when a pooled connection was reused.
    public package(set) var connect: Duration?
    /// Time spent on the TLS handshake; nil for plain http or a reused connection.
    public package(set) var tls: Duration?
    /// What the TLS session of the final response's connection negotiated (also for a reused connection); nil
    /// for plain http.
    public package(set) var tlsSession: TLSSessionInfo?
    /// From the start of the request to the first byte of the final response.
    public package(set) var timeToFirstByte: Duration?
    /// From the start of the request to the end of the response body.
    public package(set) var total: Duration?
    /// Redirects followed.
    public package(set) var redirects = 0
    /// Attempts made on the final hop (2 when a stale kept-alive connection forced a retry).
    public package(set) var attempts = 0
    /// Whether the final response came over a connection that had carried an earlier request.
    public package(set) var reusedConnection = false

    package init() {}
}
