internal import CCourierOpenSSL
internal import Synchronization

/// A server's leaf certificate as a session saw it, read into a ``TLSCertificateSummary`` only when someone asks:
/// every new connection has one, and reading it (two names, two times, the alternative names and a SHA-256 of
/// the key) cost about 7 µs per handshake that nearly nobody looks at.
final class PeerCertificate: Sendable {
    /// Holds its own reference (`X509_up_ref`); nil when made from a summary.
    private nonisolated(unsafe) let certificate: OpaquePointer?
    private let cached: Mutex<TLSCertificateSummary?>

    /// Keeps `certificate` (borrowed from the session) alive for a later ``summary``.
    init(retaining certificate: OpaquePointer) {
        X509_up_ref(certificate)
        self.certificate = certificate
        cached = Mutex(nil)
    }

    init(summary: TLSCertificateSummary) {
        certificate = nil
        cached = Mutex(summary)
    }

    deinit {
        if let certificate { X509_free(certificate) }
    }

    /// Read once, on first use. (An `X509` is immutable once parsed, and OpenSSL guards its own caches.)
    var summary: TLSCertificateSummary {
        cached.withLock { cached in
            if let summary = cached { return summary }
            let summary = X509Facts.summary(certificate!)
            cached = summary
            return summary
        }
    }
}
