internal import CourierCore
internal import Glibc
internal import CourierHTTP1
internal import CourierPosix
internal import CourierTLS

extension CourierError {
    /// Maps a lower-level failure to the error a caller sees, keeping it as the cause. This is the one place a
    /// failure is classified: its kind, its message, and what it means for a retry (``retryCondition``,
    /// ``targetUnreachable``).
    static func from(
        _ error: any Error, url: String, deadline: Deadline, timeouts: TimeoutPolicy?
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
                .classified(.connectionLost)
        case is TotalDeadline:
            let total = timeouts.map { " of \(DurationFormat.format($0.total))" } ?? ""
            return CourierError(.timeout, "the total deadline\(total) passed", url: url)
        case let e as TLSError:
            switch e.category {
            case .certificate: return CourierError(.tlsCertificate, e.message, url: url, cause: e)
            case .pin: return CourierError(.tlsPin, e.message, url: url, cause: e)
            case .handshake, .configuration: return CourierError(.tlsHandshake, e.message, url: url, cause: e)
            case .clientCertificate: return CourierError(.tlsClientCertificate, e.message, url: url, cause: e)
            case .session:
                // The session broke after the request went out (a truncation is a close without close_notify).
                return CourierError(.protocol, e.message, url: url, cause: e).classified(.connectionLost)
            }
        case let e as ProxyError:
            let error = CourierError(e.kind, e.description, url: url, cause: e)
            // The proxy could not reach the origin it was asked for: a fallback may be reachable through it.
            return e.originUnreachable ? error.classified(.connectError, unreachable: true) : error
        case let e as ResolveError:
            return CourierError(.resolve, "could not resolve \(e.host)", url: url, cause: e)
        case let e as ConnectionError:
            switch e.kind {
            case .connectTimeout:
                return CourierError(.timeout, "connecting timed out", url: url, cause: e).classified(.timeout, unreachable: true)
            case .readTimeout, .writeTimeout:
                let passed = Deadline.now() >= deadline
                return CourierError(.timeout, passed ? "the total deadline passed" : "no data within the idle timeout", url: url, cause: e)
            case .connectFailed, .noAddresses:
                return CourierError(.connect, "could not connect", url: url, cause: e)
            case .closed, .concurrentOperation:
                return CourierError(.protocol, "the connection closed", url: url, cause: e).classified(.connectionLost)
            }
        case let e as SystemCallError:
            // A reset, a broken pipe or an aborted connection after the request went out: the connection was lost.
            let lost = [ECONNRESET, EPIPE, ECONNABORTED].contains(e.errno)
            return CourierError(.protocol, "the connection failed (\(e.call): \(e.errnoDescription))", url: url, cause: e)
                .classified(lost ? .connectionLost : nil)
        case let e as ResponseParseError:
            let error = CourierError(.protocol, "the server broke HTTP/1.1 framing", url: url, cause: e)
            // A close before the body's end (Content-Length, the last chunk) is a lost connection: a retry may get
            // the rest (a resumed download asks for just that).
            if case .truncatedBody = e.reason { return error.classified(.connectionLost) }
            return error
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

extension CourierError {
    /// The error of a request cut off by a shutdown (its connection was closed under it), keeping this one as the
    /// cause and its wire counts: it is not a failure of the server's, and no retry policy covers it.
    func cutOffByShutdown() -> CourierError {
        guard kind != .shutdown else { return self }
        var error = CourierError(.shutdown, "the client shut down before the request finished", url: url, cause: self)
        error.bytesSent = bytesSent
        error.bytesReceived = bytesReceived
        error.attempts = attempts
        return error
    }
}
