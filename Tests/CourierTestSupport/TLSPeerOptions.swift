/// How a ``PythonPeer`` serves TLS: which of the ``TestPKI`` chains it presents, and its versions and tickets.
public struct TLSPeerOptions: Sendable {
    /// A chain of ``TestPKI`` (`good`, `expired`, `notyet`, `wronghost`, `selfsigned`, `untrusted`,
    /// `incomplete`, `nonca`, `clientauth`, `backup`).
    public var chain: String
    /// Lowest and highest TLS versions the server accepts (`"1.0"` … `"1.3"`); nil: Python's defaults.
    public var minVersion: String?
    public var maxVersion: String?
    /// TLS 1.3 session tickets sent per connection (0 turns resumption off).
    public var tickets: Int
    /// A CA bundle the server requires client certificates to chain to (mutual TLS); nil asks for none.
    public var clientCA: String?

    public init(chain: String = "good", minVersion: String? = nil, maxVersion: String? = nil, tickets: Int = 2, clientCA: String? = nil) {
        self.chain = chain
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.tickets = tickets
        self.clientCA = clientCA
    }

    var arguments: [String] {
        let pki = TestPKI.shared
        var args = ["--tls-chain", pki.chain(chain), "--tls-key", pki.key(chain), "--tls-tickets", String(tickets)]
        if let minVersion { args += ["--tls-min", minVersion] }
        if let maxVersion { args += ["--tls-max", maxVersion] }
        if let clientCA { args += ["--tls-client-ca", clientCA] }
        return args
    }
}
