public import CourierCore
package import CourierHTTP1

/// A response whose body has been read whole.
public struct HTTPResponse: Sendable {
    package var head: HTTPResponseHead
    /// The body, decoded when it was gzip or deflate encoded and decompression was on.
    public var body: [UInt8]
    /// The trailer fields of a chunked body, if any.
    public var trailers: HTTPHeaders
    /// The URL that answered (after redirects).
    public var url: HTTPURL
    public var metrics: RequestMetrics

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}
