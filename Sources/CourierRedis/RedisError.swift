/// Why a Redis call failed: one error type for the whole client, its kind decided once, where the failure is
/// first seen (`RedisError+Classification.swift`), and its message naming the backend (`redis 127.0.0.1:6379`).
package struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// Redis cannot be reached (connection refused or lost, resolution failed), or the circuit breaker is
        /// open after such a failure: the call was not answered, and may or may not have run.
        case unavailable
        /// The call's deadline passed before its reply arrived (or, while connecting, before the connection was
        /// ready). A connection a reply is late on is closed.
        case timeout
        /// The server sent something that is not RESP, or a reply nothing asked for: the connection is closed.
        case protocolViolation = "protocol"
        /// `AUTH` failed (wrong user or password), or the server wants credentials and none were configured.
        case authentication
        /// The server answered with an error reply (`ERR`, `WRONGTYPE`, `NOSCRIPT`…); the connection is fine.
        case server
        /// The TLS handshake failed (certificate, pin, version).
        case tls
        /// The calling task was cancelled.
        case cancelled
        /// The client was shut down.
        case shutdown
        /// The URL or configuration is unusable.
        case configuration
    }

    package let kind: Kind
    /// What happened, in words, without the backend's name.
    package let message: String
    /// `host:port` of the server.
    package let backend: String

    package init(_ kind: Kind, _ message: String, backend: String) {
        self.kind = kind
        self.message = message
        self.backend = backend
    }

    /// The first word of a server error reply (`NOSCRIPT`, `WRONGPASS`, `ERR`); nil for other kinds.
    package var serverCode: String? {
        guard kind == .server || kind == .authentication else { return nil }
        let code = message.prefix { $0 != " " }
        return code.isEmpty || code.contains(where: \.isLowercase) ? nil : String(code)
    }

    package var description: String { "redis \(backend): \(kind.rawValue): \(message)" }
}
