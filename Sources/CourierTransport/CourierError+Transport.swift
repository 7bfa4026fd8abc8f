import CourierCore
import CourierHTTP1
import CourierPosix
import CourierTLS

extension CourierError {
    /// Maps a lower-level failure to the error a caller sees, keeping it as the cause.
    static func from(
        _ error: any Error, url: String, deadline: ContinuousClock.Instant, timeouts: TimeoutPolicy?
    ) -> CourierError {
        switch error {
        case let e as CourierError:
            var e = e
            if e.url == nil { e.url = url }
            return e
        case is CancellationError:
            return CourierError(.cancelled, "the request was cancelled", url: url)
        case is ClosedBeforeResponse:
            return CourierError(.protocol, "the server closed the connection without answering", url: url)
        case is TotalDeadline:
            let total = timeouts.map { " of \(DurationFormat.format($0.total))" } ?? ""
            return CourierError(.timeout, "the total deadline\(total) passed", url: url)
        case let e as TLSError:
            let kind: CourierError.Kind
            switch e.category {
            case .certificate: kind = .tlsCertificate
            case .pin: kind = .tlsPin
            case .handshake, .configuration: kind = .tlsHandshake
            case .session: kind = .protocol
            }
            return CourierError(kind, e.message, url: url, cause: e)
        case let e as ResolveError:
            return CourierError(.resolve, "could not resolve \(e.host)", url: url, cause: e)
        case let e as ConnectionError:
            switch e.kind {
            case .connectTimeout:
                return CourierError(.timeout, "connecting timed out", url: url, cause: e)
            case .readTimeout, .writeTimeout:
                let passed = ContinuousClock.now >= deadline
                return CourierError(.timeout, passed ? "the total deadline passed" : "no data within the idle timeout", url: url, cause: e)
            case .connectFailed, .noAddresses:
                return CourierError(.connect, "could not connect", url: url, cause: e)
            case .closed, .concurrentOperation:
                return CourierError(.protocol, "the connection closed", url: url, cause: e)
            }
        case let e as SystemCallError:
            return CourierError(.protocol, "the connection failed (\(e.call): \(e.errnoDescription))", url: url, cause: e)
        case let e as ResponseParseError:
            return CourierError(.protocol, "the server broke HTTP/1.1 framing", url: url, cause: e)
        case let e as RequestEncodingError:
            return CourierError(.policy, "the request is invalid", url: url, cause: e)
        case let e as RedirectError:
            return CourierError(.protocol, "the server sent a bad redirect", url: url, cause: e)
        case let e as ContentDecodingError:
            if case .decodedBodyTooLarge = e.reason {
                return CourierError(.bodyTooLarge, "the decoded body is larger than the limit", url: url, cause: e)
            }
            return CourierError(.protocol, "the body could not be decoded", url: url, cause: e)
        default:
            return CourierError(.protocol, "the request failed", url: url, cause: error)
        }
    }
}

extension HTTP1ConnectionStateMachine.FailureCause {
    /// The state machine's view of a failure.
    init(_ error: any Error) {
        switch error {
        case is CancellationError: self = .cancelled
        case is TotalDeadline: self = .timeout
        case is ResponseParseError: self = .protocolError
        case let e as ConnectionError:
            switch e.kind {
            case .readTimeout, .writeTimeout, .connectTimeout: self = .timeout
            default: self = .connectionClosed
            }
        default: self = .connectionClosed
        }
    }
}
