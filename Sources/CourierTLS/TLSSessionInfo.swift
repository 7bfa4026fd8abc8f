/// What was negotiated, for reports and `courier fetch -v`.
public struct TLSSessionInfo: Sendable, Hashable {
    /// `TLSv1.3` or `TLSv1.2`.
    public var version: String
    /// The cipher suite, OpenSSL's name for it.
    public var cipher: String
    /// The application protocol the server chose with ALPN (`http/1.1`), nil when it chose none.
    public var alpn: String?
    /// Whether an earlier session was resumed (no full handshake, no certificate sent).
    public var resumed: Bool
    /// The server's certificate (the leaf), when one was seen.
    public var peerCertificate: TLSCertificateSummary?
}
