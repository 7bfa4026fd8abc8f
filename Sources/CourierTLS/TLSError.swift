/// Why a TLS session could not be set up or went wrong, said precisely enough to act on.
///
/// ``category`` is what a caller branches on (the transport maps it to `tls-certificate`, `tls-handshake`,
/// `tls-pin` or `protocol`); ``reason`` carries the details (dates, names, pins); ``openSSLErrors`` is
/// OpenSSL's error queue as it stood when the failure was seen, drained into the error.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broad class of a failure.
    public enum Category: String, Sendable, Equatable {
        /// The server's certificate chain or name did not verify.
        case certificate
        /// No key in the verified chain matched the pins.
        case pin
        /// The handshake failed for another reason (versions, ciphers, an alert, a non-TLS peer).
        case handshake
        /// The session broke after the handshake (a truncation, a bad record).
        case session
        /// The local TLS settings are unusable (a CA file that cannot be read).
        case configuration
        /// The client certificate or its key cannot be used (unreadable, encrypted without the right password, or
        /// not a pair): found when the context is built, before any connection.
        case clientCertificate
    }

    /// What exactly failed.
    public enum Reason: Sendable, Equatable {
        /// No trusted root for the chain (unknown or untrusted issuer, or an incomplete chain).
        case untrustedIssuer(certificate: String)
        /// The server presented a self-signed certificate that is not trusted.
        case selfSigned(certificate: String)
        /// A certificate of the chain has expired.
        case expired(certificate: String, notAfter: String)
        /// A certificate of the chain is not valid yet.
        case notYetValid(certificate: String, notBefore: String)
        /// The leaf does not name the host; `names` lists what it does name (DNS names and IP addresses).
        case hostnameMismatch(host: String, names: [String])
        /// A certificate may not be used for a TLS server (its key usage or extended key usage says otherwise).
        case wrongKeyUsage(certificate: String)
        /// An issuer in the chain is not a CA.
        case issuerNotACA(certificate: String)
        /// Any other verification error, with OpenSSL's text for it.
        case otherVerificationFailure(code: Int32, text: String)
        /// The pins did not match any key of the chain; `offered` are the pins of the chain's keys.
        case pinMismatch(offered: [String], expected: [String])
        /// The server and the client share no protocol version (e.g. a TLS 1.0-only server, or a minimum of 1.3
        /// against a 1.2-only server).
        case protocolVersion
        /// The peer does not speak TLS at all (a plain-text server answered).
        case notTLS
        /// Another handshake failure.
        case handshakeFailed
        /// The peer closed the connection without `close_notify`, where that can hide a truncated body.
        case truncated
        /// A record could not be read or written after the handshake.
        case sessionFailed
        /// The CA file could not be loaded.
        case unreadableCAFile(path: String)
        /// The client certificate file holds no PEM certificate that could be read.
        case unreadableClientCertificate(path: String)
        /// The client key file holds no PEM private key that could be read.
        case unreadableClientKey(path: String)
        /// The client key is encrypted and no password was given.
        case clientKeyNeedsPassword(path: String)
        /// The client key is encrypted and the password given does not decrypt it.
        case wrongClientKeyPassword(path: String)
        /// The client key is not the key of the client certificate.
        case clientKeyMismatch(certificatePath: String, keyPath: String)
        /// The server refused the client's certificate, or its lack of one, with a TLS alert: `alert` is the
        /// alert's name (`certificate_required`, `unknown_ca`, `bad_certificate`, `certificate_expired`, ...),
        /// `certificate` the subject of the certificate presented (nil: none was), `expiredOn` its end of
        /// validity when it has expired.
        case clientCertificateRejected(alert: String, certificate: String?, expiredOn: String?)
    }

    public package(set) var reason: Reason
    /// OpenSSL's error queue at the failure, oldest first.
    public package(set) var openSSLErrors: [String]

    package init(_ reason: Reason, openSSLErrors: [String] = []) {
        self.reason = reason
        self.openSSLErrors = openSSLErrors
    }

    public var category: Category {
        switch reason {
        case .untrustedIssuer, .selfSigned, .expired, .notYetValid, .hostnameMismatch, .wrongKeyUsage, .issuerNotACA,
            .otherVerificationFailure:
            return .certificate
        case .pinMismatch: return .pin
        case .protocolVersion, .notTLS, .handshakeFailed, .clientCertificateRejected: return .handshake
        case .truncated, .sessionFailed: return .session
        case .unreadableCAFile: return .configuration
        case .unreadableClientCertificate, .unreadableClientKey, .clientKeyNeedsPassword, .wrongClientKeyPassword,
            .clientKeyMismatch:
            return .clientCertificate
        }
    }

    /// One sentence, without the OpenSSL queue.
    public var message: String {
        switch reason {
        case .untrustedIssuer(let cert):
            return "the certificate chain is not trusted: no trusted issuer for '\(cert)' (unknown CA or incomplete chain)"
        case .selfSigned(let cert):
            return "the server's certificate '\(cert)' is self-signed and not trusted"
        case .expired(let cert, let notAfter):
            return "the certificate '\(cert)' expired on \(notAfter)"
        case .notYetValid(let cert, let notBefore):
            return "the certificate '\(cert)' is not valid before \(notBefore)"
        case .hostnameMismatch(let host, let names):
            let held = names.isEmpty ? "no names" : names.joined(separator: ", ")
            return "the certificate does not match '\(host)'; it is for \(held)"
        case .wrongKeyUsage(let cert):
            return "the certificate '\(cert)' may not be used by a TLS server (key usage or extended key usage)"
        case .issuerNotACA(let cert):
            return "the certificate '\(cert)' issued another certificate but is not a CA"
        case .otherVerificationFailure(let code, let text):
            return "the certificate chain did not verify: \(text) (X509 error \(code))"
        case .pinMismatch(let offered, let expected):
            return "no key in the certificate chain matches the pins \(expected.joined(separator: ", ")); the chain offered \(offered.joined(separator: ", "))"
        case .protocolVersion:
            return "the server and the client share no TLS version (TLS 1.2 is the lowest Courier speaks, or the policy's minimum)"
        case .notTLS:
            return "the server did not answer with TLS (is it a plain-text HTTP server?)"
        case .handshakeFailed:
            return "the TLS handshake failed"
        case .truncated:
            return "the server ended the TLS session without close_notify: the data may be truncated"
        case .sessionFailed:
            return "the TLS session failed"
        case .unreadableCAFile(let path):
            return "the CA file '\(path)' could not be loaded"
        case .unreadableClientCertificate(let path):
            return "the client certificate file '\(path)' could not be read (a PEM certificate, then any intermediates)"
        case .unreadableClientKey(let path):
            return "the client key file '\(path)' could not be read (a PEM private key)"
        case .clientKeyNeedsPassword(let path):
            return "the client key '\(path)' is encrypted and no password was given"
        case .wrongClientKeyPassword(let path):
            return "the password does not decrypt the client key '\(path)'"
        case .clientKeyMismatch(let certificatePath, let keyPath):
            return "the client key '\(keyPath)' does not belong to the client certificate '\(certificatePath)'"
        case .clientCertificateRejected(let alert, let certificate, let expiredOn):
            guard let certificate else {
                return "the server requires a client certificate and none was given (TLS alert \(alert))"
            }
            if let expiredOn {
                return "the server rejected the client certificate '\(certificate)': it expired on \(expiredOn) (TLS alert \(alert))"
            }
            return "the server rejected the client certificate '\(certificate)' (TLS alert \(alert))"
        }
    }

    public var description: String {
        openSSLErrors.isEmpty ? message : "\(message) [OpenSSL: \(openSSLErrors.joined(separator: "; "))]"
    }
}
