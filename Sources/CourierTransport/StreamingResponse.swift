public import CourierCore
package import CourierHTTP1

/// A response whose head has arrived and whose body is read as the caller consumes it.
public struct StreamingResponse: Sendable {
    package var head: HTTPResponseHead
    /// The URL that answered (after redirects).
    public var url: HTTPURL
    /// The body, chunk by chunk. Reading stops when the caller stops: nothing is read ahead (backpressure).
    public let body: ResponseBodyReader

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}
