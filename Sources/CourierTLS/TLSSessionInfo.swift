/// What was negotiated, for reports and `courier fetch -v`.
public struct TLSSessionInfo: Sendable, Hashable {
    /// `TLSv1.3` or `TLSv1.2`.
    public package(set) var version: String
    /// The cipher suite, OpenSSL's name for it.
    public package(set) var cipher: String
    /// The application protocol the server chose with ALPN (`http/1.1`), nil when it chose none.
    public package(set) var alpn: String?
    /// Whether an earlier session was resumed (no full handshake, no certificate sent).
    public package(set) var resumed: Bool
    /// The server's certificate (the leaf), when one was seen; read out of the certificate the first time it is
    /// asked for.
    public var peerCertificate: TLSCertificateSummary? {
        get { certificate?.summary }
        set { certificate = newValue.map { PeerCertificate(summary: $0) } }
    }
    private var certificate: PeerCertificate?

    /// Facts of a session as given (a session's own facts come from its engine, which reads its certificate
    /// lazily).
    package init(version: String, cipher: String, alpn: String?, resumed: Bool, peerCertificate: TLSCertificateSummary?) {
        self.init(version: version, cipher: cipher, alpn: alpn, resumed: resumed, certificate: peerCertificate.map {
            PeerCertificate(summary: $0)
        })
    }

    /// Facts of a session whose certificate is read on first use.
    init(version: String, cipher: String, alpn: String?, resumed: Bool, certificate: PeerCertificate?) {
        self.version = version
        self.cipher = cipher
        self.alpn = alpn
        self.resumed = resumed
        self.certificate = certificate
    }

    public static func == (lhs: TLSSessionInfo, rhs: TLSSessionInfo) -> Bool {
        lhs.version == rhs.version && lhs.cipher == rhs.cipher && lhs.alpn == rhs.alpn && lhs.resumed == rhs.resumed
            && lhs.peerCertificate == rhs.peerCertificate
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(cipher)
        hasher.combine(alpn)
        hasher.combine(resumed)
        hasher.combine(peerCertificate)
    }
}
