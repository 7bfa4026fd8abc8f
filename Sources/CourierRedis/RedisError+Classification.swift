internal import CourierCore
internal import CourierPosix
internal import CourierTLS

extension RedisError {
    /// The one place a failure from below (sockets, resolver, TLS, the parser, cancellation) becomes a
    /// ``RedisError``: `during` says what was under way, for the message ("connecting", "GET").
    static func classify(_ error: any Error, during: String, backend: String) -> RedisError {
        switch error {
        case let error as RedisError:
            return error
        case is CancellationError:
            return RedisError(.cancelled, "\(during) was cancelled", backend: backend)
        case let error as ConnectionError:
            switch error.kind {
            case .connectTimeout, .readTimeout, .writeTimeout:
                return RedisError(.timeout, "\(during) did not finish within its deadline (\(error))", backend: backend)
            case .connectFailed, .noAddresses, .closed, .concurrentOperation:
                return RedisError(.unavailable, "\(during): \(error)", backend: backend)
            }
        case let error as ResolveError:
            return RedisError(.unavailable, "\(during): \(error)", backend: backend)
        case let error as SystemCallError:
            return RedisError(.unavailable, "\(during): \(error)", backend: backend)
        case let error as TLSError:
            return RedisError(.tls, "\(during): \(error)", backend: backend)
        case let error as RESPParseError:
            return RedisError(.protocolViolation, "\(during): \(error)", backend: backend)
        default:
            return RedisError(.unavailable, "\(during): \(error)", backend: backend)
        }
    }

    /// The error for a server's error reply to `command`: authentication errors (`WRONGPASS`, `NOAUTH`, and
    /// `ERR` answers to `AUTH`) are ``Kind-swift.enum/authentication``, the rest ``Kind-swift.enum/server``, with
    /// the server's text as the message.
    static func reply(_ message: String, to command: String, backend: String) -> RedisError {
        let code = message.prefix { $0 != " " }
        if code == "WRONGPASS" || code == "NOAUTH" || code == "NOPERM" || command == "AUTH" {
            return RedisError(.authentication, message, backend: backend)
        }
        return RedisError(.server, message, backend: backend)
    }
}
