/// What went wrong with a request, and where: the error every Courier request fails with.
///
/// ``kind`` is a closed vocabulary that scripts and metrics can rely on (it is also the `error.kind` of
/// `courier fetch --json-report`); ``message`` says what happened in words, ``url`` where, and ``cause``
/// carries the lower-level error (a system call and its errno, a TLS error stack, a parse error) when there is
/// one. New kinds may be added without breaking the API, as the kinds are static members, not enum cases.
/// Its fields are read-only outside Courier: the loader's retry and fallback decisions read them (a classification
/// is made once, where the failure happens), so a caller or plugin cannot change what a failure means.
public struct CourierError: Error, Sendable, CustomStringConvertible {
    /// The category of a failure.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The host name could not be resolved.
        public static let resolve = Kind(rawValue: "resolve")
        /// No connection could be made to any address.
        public static let connect = Kind(rawValue: "connect")
        /// A connect, idle or total deadline passed.
        public static let timeout = Kind(rawValue: "timeout")
        /// The TLS handshake failed.
        public static let tlsHandshake = Kind(rawValue: "tls-handshake")
        /// The server's certificate was not trusted.
        public static let tlsCertificate = Kind(rawValue: "tls-certificate")
        /// The client certificate or its key could not be used (unreadable, encrypted without the right password,
        /// not a pair): found before any connection was made.
        public static let tlsClientCertificate = Kind(rawValue: "tls-client-certificate")
        /// No key in the server's chain matched the policy's pins.
        public static let tlsPin = Kind(rawValue: "tls-pin")
        /// The server broke HTTP/1.1 framing or closed the connection mid-message.
        public static let `protocol` = Kind(rawValue: "protocol")
        /// More redirects than allowed.
        public static let tooManyRedirects = Kind(rawValue: "too-many-redirects")
        /// A body (or its decoded form) was larger than the limit.
        public static let bodyTooLarge = Kind(rawValue: "body-too-large")
        /// The request was cancelled.
        public static let cancelled = Kind(rawValue: "cancelled")
        /// The policy forbade the request (e.g. credentials over plain http, offline mode, an invalid request).
        public static let policy = Kind(rawValue: "policy")
        /// The client or data-loader service was shutting down: the request was refused before it was sent, or
        /// was still in flight when the shutdown's grace period ended.
        public static let shutdown = Kind(rawValue: "shutdown")
        /// The system refused a resource Courier needs to start (a thread, an epoll instance, an eventfd).
        public static let system = Kind(rawValue: "system")
        /// The policy's coordination backend (Redis) could not be reached or refused Courier, and the policy says
        /// `on-unavailable: closed`: a fleet-scoped limit could not be enforced, so nothing was sent.
        public static let coordination = Kind(rawValue: "coordination")
        /// The proxy's host name could not be resolved (the error names the proxy).
        public static let proxyResolve = Kind(rawValue: "proxy-resolve")
        /// An HTTP proxy refused the tunnel: its `CONNECT` was answered with a status other than 2xx (`407` when
        /// it wants credentials), or the proxy broke HTTP/1.1 framing in its answer.
        public static let proxyTunnel = Kind(rawValue: "proxy-tunnel")
        /// A SOCKS5 proxy refused the connection (its reply code by name) or the authentication, or broke the
        /// SOCKS protocol.
        public static let socks = Kind(rawValue: "socks")
        /// A protocol plugin (``ProtocolPlugin``: `data:`, `file:` or one of the app's) could not answer: a
        /// malformed `data:` URL, a file that is missing, a directory or outside the root, or any error the plugin
        /// threw that was not already a ``CourierError``.
        public static let protocolPlugin = Kind(rawValue: "protocol-plugin")

        public var description: String { rawValue }
    }

    public package(set) var kind: Kind
    /// What happened, in one sentence.
    public package(set) var message: String
    /// The URL of the request (or redirect hop) that failed, when known.
    public package(set) var url: String?
    /// The lower-level error, when there is one.
    public package(set) var cause: (any Error & Sendable)?
    /// Bytes the failed request had written to the wire before it failed, headers included, over every attempt
    /// (for consumption accounting; 0 when nothing was sent).
    public package(set) var bytesSent: Int64 = 0
    /// Bytes the failed request had read from the wire before it failed, headers included, over every attempt.
    public package(set) var bytesReceived: Int64 = 0
    /// Attempts the request made before it failed, the first included (0 when it failed before sending, e.g.
    /// for an invalid URL or offline).
    public package(set) var attempts = 0
    /// What the failure means for a retry policy (`connect-error`, `timeout`, `connection-lost`), decided once,
    /// where the failure was classified; nil when no retry condition covers it. Never derived from the message.
    public package(set) var retryCondition: RetryPolicy.Condition?
    /// Whether the target was never reached (a resolve or connect failure, or a connect timeout): another address
    /// (a fallback) may work where this one did not.
    public package(set) var targetUnreachable: Bool
    /// What a layer above attaches to a failure it reports (the data loader's per-load report, which
    /// `CourierError.report` in CourierKit reads): a reference, so an error that carries none costs one word.
    package var attachment: (any AnyObject & Sendable)?

    /// An error of `kind`; its retry condition and reachability default to what the kind implies (`resolve` and
    /// `connect`: `connect-error`, unreachable; `timeout`: `timeout`).
    public init(_ kind: Kind, _ message: String, url: String? = nil, cause: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.cause = cause
        switch kind {
        case .resolve, .connect, .proxyResolve:
            retryCondition = .connectError
            targetUnreachable = true
        case .timeout:
            retryCondition = .timeout
            targetUnreachable = false
        default:
            retryCondition = nil
            targetUnreachable = false
        }
    }

    /// The same error with another retry condition and reachability (for the classifier that knows better than
    /// the kind alone).
    package func classified(_ condition: RetryPolicy.Condition?, unreachable: Bool = false) -> CourierError {
        var copy = self
        copy.retryCondition = condition
        copy.targetUnreachable = unreachable
        return copy
    }

    /// `kind: message (url) [cause]`.
    public var description: String {
        var s = "\(kind): \(message)"
        if let url { s += " (\(url))" }
        if let cause { s += " [\(cause)]" }
        return s
    }
}
