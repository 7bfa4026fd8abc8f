internal import CourierTLS

/// What `-v` prints of a TLS session, as curl does: the negotiated version, cipher and ALPN, whether the session
/// was resumed, and the server certificate's subject, issuer, validity and names.
enum TLSSessionDescription {
    static func lines(_ session: TLSSessionInfo) -> [String] {
        var lines = [
            "TLS: \(session.version), \(session.cipher), ALPN \(session.alpn ?? "none"), "
                + (session.resumed ? "resumed session" : "full handshake")
        ]
        if let cert = session.peerCertificate {
            lines.append("  subject: \(cert.subject)")
            lines.append("  issuer: \(cert.issuer)")
            lines.append("  valid: \(cert.notBefore) to \(cert.notAfter)")
            if !cert.names.isEmpty { lines.append("  names: \(cert.names.joined(separator: ", "))") }
            lines.append("  key pin: \(cert.pin)")
        }
        return lines
    }

    static func write(_ session: TLSSessionInfo, index: Int) {
        for line in lines(session) { StandardError.write("#\(index + 1) \(line)") }
    }
}
