package import CourierCore
package import CourierHTTP1

/// One exchange's response head and the leased connection its body is still to be read from: what
/// ``HTTPClient/exchange(_:deadline:)`` returns. Its owner reads the body exactly once, in one of three ways, each
/// through ``BodyReading``: whole (``HTTPClient/readWhole(_:limit:)``), as a stream
/// (``HTTPClient/streaming(_:)``), or dropped (``drain()``).
package struct HTTPExchange: Sendable {
    package let head: HTTPResponseHead
    /// The URL the request went to.
    package let url: HTTPURL
    var reading: BodyReading
    /// How many bytes the body may have, by its `Content-Length` (nil: unknown, or none for a `HEAD`).
    let expectedLength: Int?

    package var status: Int { head.status }
    package var headers: HTTPHeaders { head.headers }
    /// The figures so far (the body's bytes are counted once it has been read).
    package var metrics: RequestMetrics { reading.metrics }

    /// Reads and drops the body (a redirect's, a retried response's) so the connection can be reused, up to
    /// 64 KiB, past which the connection is closed instead. Returns the exchange's final figures; never fails.
    nonisolated(nonsending) package mutating func drain() async -> RequestMetrics {
        await reading.drain()
        return reading.metrics
    }

    /// Gives the connection up unread (closed, not reused); returns the figures so far.
    package mutating func abandon() -> RequestMetrics {
        reading.cancel()
        return reading.metrics
    }
}
