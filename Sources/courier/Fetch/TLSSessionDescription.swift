internal import CourierTLS

/// What `-v` prints of a TLS session, as curl does: the negotiated version and cipher, the ALPN protocol (or
/// none), whether the session was resumed, and the server certificate's subject, issuer, validity and names.
enum TLSSessionDescription {
    static func lines(_ session: TLSSessionInfo) -> [String] {
        var lines = [
            "TLS connection using \(session.version) / \(session.cipher)" + (session.resumed ? " (resumed session)" : ""),
            "ALPN: " + (session.alpn.map { "server accepted \($0)" } ?? "none"),
        ]
        if let cert = session.peerCertificate {
            lines.append("Server certificate:")
            lines.append(" subject: \(cert.subject)")
            lines.append(" issuer: \(cert.issuer)")
            lines.append(" start date: \(cert.notBefore)")
            lines.append(" expire date: \(cert.notAfter)")
            if !cert.names.isEmpty { lines.append(" subjectAltName: \(cert.names.joined(separator: ", "))") }
            lines.append(" public key pin: \(cert.pin)")
        }
        return lines
    }
}
