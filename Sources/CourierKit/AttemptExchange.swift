import CourierCore
import CourierTransport

/// One attempt's response as the transport gave it: read whole (``DataLoader/load(_:)``), or a head whose body
/// is still on the wire (the streaming and delegate APIs).
///
/// Indirect: the loader copies an exchange several times on its way to the caller (out of `send`'s result, into
/// the load's state, into the answer), and a boxed one is copied with one reference count instead of one per
/// reference-counted field of its response (about 80 fewer atomic operations per load).
indirect enum AttemptExchange: Sendable {
    case whole(HTTPResponse)
    case streaming(StreamingResponse)

    var status: Int {
        switch self {
        case .whole(let r): return r.status
        case .streaming(let r): return r.status
        }
    }

    /// The status line's reason phrase (informative only).
    var reason: String {
        switch self {
        case .whole(let r): return r.head.reason
        case .streaming(let r): return r.head.reason
        }
    }

    var headers: HTTPHeaders {
        switch self {
        case .whole(let r): return r.headers
        case .streaming(let r): return r.headers
        }
    }

    var url: HTTPURL {
        switch self {
        case .whole(let r): return r.url
        case .streaming(let r): return r.url
        }
    }

    /// The transport's figures so far: final for a whole response; for a streaming one, the bytes received
    /// grow until its body ends.
    var metrics: RequestMetrics {
        switch self {
        case .whole(let r): return r.metrics
        case .streaming(let r): return r.body.metrics
        }
    }

    /// Reads and drops the body of a response that will not be delivered (a retried status, a 401, a
    /// redirect), so its connection can be reused: up to 64 KiB, beyond which the connection is closed instead.
    /// Returns the exchange's final figures.
    func discard() async -> RequestMetrics {
        guard case .streaming(let r) = self else { return metrics }
        return await r.body.drain()
    }
}
