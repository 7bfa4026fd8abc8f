internal import CCourierOpenSSL
internal import CourierCore

/// One client TLS session over memory BIOs: ciphertext in, ciphertext out, plaintext in between. It does no
/// I/O and reads no clock; its owner (the transport's `TLSStream`) moves the bytes between it and the socket
/// whenever a step asks for input or leaves output waiting.
///
/// Memory BIOs rather than OpenSSL's socket BIO, as swift-nio-ssl does: the engine stays beside the codec and
/// the event loop in the layering (it never sees a descriptor), the socket's readiness, timeouts and
/// cancellation stay in one place (`TCPConnection`), and the engine can be driven in tests without a socket.
///
/// Not thread-safe: the owner serialises every call (it is `Sendable` only so that an owner can keep it under its
/// lock and hand it between tasks).
package final class TLSEngine: @unchecked Sendable {
    /// The result of a handshake step.
    package enum HandshakeStep: Equatable {
        /// The session is established, verified and pinned.
        case complete
        /// More ciphertext from the peer is needed (send ``takeOutput()`` first).
        case wantInput
        case failed(TLSError)
    }

    /// The result of a read.
    package enum ReadStep: Equatable {
        /// This many plaintext bytes were read.
        case bytes(Int)
        /// No plaintext yet: more ciphertext is needed.
        case wantInput
        /// The peer ended the session cleanly (`close_notify`).
        case closed
        case failed(TLSError)
    }

    /// What OpenSSL's C callbacks reach through the SSL object's app data.
    final class Link {
        let sessions: TLSSessionCache
        let origin: String
        /// The first verification failure the verify callback saw.
        var verifyFailure: (code: Int32, certificate: TLSCertificateSummary)?
        /// Sessions are kept only once the handshake is verified and pinned; one that arrives before is held here.
        var verified = false
        var pendingSession: OpaquePointer?
        /// Whether the server asked for a client certificate this session does not have.
        var certificateRequested = false

        init(sessions: TLSSessionCache, origin: String) {
            self.sessions = sessions
            self.origin = origin
        }

        static func of(_ ssl: OpaquePointer) -> Link? {
            guard let raw = ccourier_SSL_get_app_data(ssl) else { return nil }
            return Unmanaged<Link>.fromOpaque(raw).takeUnretainedValue()
        }

        /// Adopts a new session (one reference); false when it is not wanted.
        func sessionArrived(_ session: OpaquePointer) -> Bool {
            guard SSL_SESSION_is_resumable(session) == 1 else { return false }
            if verified {
                sessions.store(session, for: origin)
            } else {
                if let old = pendingSession { SSL_SESSION_free(old) }
                pendingSession = session
            }
            return true
        }

        func commitPendingSession() {
            verified = true
            if let session = pendingSession {
                pendingSession = nil
                sessions.store(session, for: origin)
            }
        }

        deinit {
            if let session = pendingSession { SSL_SESSION_free(session) }
        }
    }

    /// The protocols offered with ALPN, in the wire format (length-prefixed): `http/1.1`.
    private static let alpn: [UInt8] = [8] + Array("http/1.1".utf8)

    package let context: TLSContext
    /// The host as the URL names it: what SNI carries (for a name) and what the certificate must match.
    package let serverName: String
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private let link: Link
    private var peerEnded = false
    private var established = false

    /// Starts a client session for `serverName` (a DNS name or an IP literal, without brackets) and `port`
    /// (the origin's, used to find a session to resume).
    package init(context: TLSContext, serverName: String, port: Int) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.pointer), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw TLSError(.handshakeFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts)
        }
        _ = ccourier_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)  // the SSL object owns both BIOs from here
        self.context = context
        self.serverName = serverName
        self.ssl = ssl
        self.input = input
        self.output = output
        let isIPLiteral = HostPattern.isIPLiteral(serverName)
        self.link = Link(sessions: context.sessions, origin: "\(isIPLiteral && serverName.contains(":") ? "[\(serverName)]" : serverName):\(port)")
        _ = ccourier_SSL_set_app_data(ssl, Unmanaged.passUnretained(link).toOpaque())
        SSL_set_connect_state(ssl)
        if !isIPLiteral { _ = ccourier_SSL_set_tlsext_host_name(ssl, serverName) }  // SNI: never for IP literals
        _ = SSL_set_alpn_protos(ssl, Self.alpn, UInt32(Self.alpn.count))
        if context.policy.verifiesPeer {
            if isIPLiteral {
                _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
            } else {
                SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                _ = SSL_set1_host(ssl, serverName)
            }
            SSL_set_verify(ssl, SSL_VERIFY_PEER) { ok, store in
                guard ok == 0, let store, let ssl = ccourier_X509_STORE_CTX_get_ssl(store), let link = TLSEngine.Link.of(ssl)
                else { return ok }
                if link.verifyFailure == nil, let cert = X509_STORE_CTX_get_current_cert(store) {
                    link.verifyFailure = (X509_STORE_CTX_get_error(store), X509Facts.summary(cert))
                }
                return ok
            }
        } else {
            SSL_set_verify(ssl, SSL_VERIFY_NONE, nil)
        }
        if let session = context.sessions.take(for: link.origin) {
            _ = SSL_set_session(ssl, session)
            SSL_SESSION_free(session)
        }
    }

    deinit {
        SSL_free(ssl)
    }

    // MARK: - Moving ciphertext

    /// Ciphertext that arrived from the peer.
    package func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        _ = BIO_write(input, bytes.baseAddress, Int32(bytes.count))
    }

    package func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The peer closed the connection: no more ciphertext will come.
    package func feedEndOfInput() {
        peerEnded = true
        _ = ccourier_BIO_set_mem_eof_return(input, 0)
    }

    /// Whether ciphertext waits to be sent.
    package var hasOutput: Bool { ccourier_BIO_pending(output) > 0 }

    /// Ciphertext to send to the peer (empty when there is none).
    package func takeOutput() -> [UInt8] {
        let count = ccourier_BIO_pending(output)
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(output, buffer.baseAddress, Int32(count))))
        }
    }

    /// Whether plaintext or unprocessed ciphertext is buffered inside the engine (a read would not need the
    /// network).
    package var hasBufferedInput: Bool { SSL_pending(ssl) > 0 || ccourier_BIO_pending(input) > 0 }

    // MARK: - Handshake

    /// Advances the handshake with what was fed so far.
    package func handshake() -> HandshakeStep {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            if let failure = checkPins() {
                context.sessions.forget(link.origin)
                return .failed(failure)
            }
            established = true
            link.commitPendingSession()
            return .complete
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .wantInput }
        context.sessions.forget(link.origin)
        return .failed(handshakeFailure())
    }

    private func handshakeFailure() -> TLSError {
        let (errors, lastReason) = OpenSSLErrorQueue.drain()
        let verifyResult = SSL_get_verify_result(ssl)
        if context.policy.verifiesPeer, verifyResult != X509_V_OK {
            return TLSError(certificateReason(Int32(verifyResult)), openSSLErrors: errors)
        }
        if let rejection = clientCertificateRejection(lastReason) { return TLSError(rejection, openSSLErrors: errors) }
        switch lastReason {
        case SSL_R_WRONG_VERSION_NUMBER, SSL_R_PACKET_LENGTH_TOO_LONG, SSL_R_RECORD_LENGTH_MISMATCH:
            return TLSError(.notTLS, openSSLErrors: errors)
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
            SSL_R_UNKNOWN_PROTOCOL:
            return TLSError(.protocolVersion, openSSLErrors: errors)
        default:
            if peerEnded && errors.isEmpty {
                return TLSError(.handshakeFailed, openSSLErrors: ["the server closed the connection during the handshake"])
            }
            return TLSError(.handshakeFailed, openSSLErrors: errors)
        }
    }

    private func certificateReason(_ code: Int32) -> TLSError.Reason {
        let cert = link.verifyFailure?.certificate
        let subject = cert?.subject ?? "?"
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return .expired(certificate: subject, notAfter: cert?.notAfter ?? "?")
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return .notYetValid(certificate: subject, notBefore: cert?.notBefore ?? "?")
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return .hostnameMismatch(host: serverName, names: cert?.names ?? [])
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            return .selfSigned(certificate: subject)
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
            X509_V_ERR_CERT_UNTRUSTED:
            return .untrustedIssuer(certificate: subject)
        case X509_V_ERR_INVALID_PURPOSE, X509_V_ERR_KEYUSAGE_NO_DIGITAL_SIGNATURE:
            return .wrongKeyUsage(certificate: subject)
        case X509_V_ERR_INVALID_CA, X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            return .issuerNotACA(certificate: subject)
        default:
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            return .otherVerificationFailure(code: code, text: text)
        }
    }

    /// The alerts a server sends about the client's certificate (RFC 8446 §6.2), by number.
    private static let clientCertificateAlerts: [Int32: String] = [
        42: "bad_certificate", 43: "unsupported_certificate", 44: "certificate_revoked", 45: "certificate_expired",
        46: "certificate_unknown", 48: "unknown_ca", 49: "access_denied", 116: "certificate_required",
    ]

    /// The server's refusal of this client's certificate (or of its lack of one), when `reason` (OpenSSL's reason
    /// code for a received alert) is one of those alerts.
    private func clientCertificateRejection(_ reason: Int32?) -> TLSError.Reason? {
        guard let reason else { return nil }
        let number = ccourier_alert_of_reason(reason)
        // TLS 1.2 has no certificate_required: a server that wanted one and got none says handshake_failure.
        let alert = number == 40 && link.certificateRequested ? "handshake_failure" : Self.clientCertificateAlerts[number]
        guard let alert else { return nil }
        let presented = context.clientCertificate
        return .clientCertificateRejected(alert: alert, certificate: presented?.subject, expiredOn: presented?.expiredOn)
    }

    /// Checks the pins against every certificate of the verified chain (the chain as sent when verification is
    /// off); nil when they match or there are none. A resumed session was pinned when it was first made (the
    /// session cache belongs to one policy, pins included), and no chain is sent again.
    private func checkPins() -> TLSError? {
        let pins = context.policy.pins
        guard !pins.isEmpty, SSL_session_reused(ssl) == 0 else { return nil }
        let chain = context.policy.verifiesPeer ? SSL_get0_verified_chain(ssl) : SSL_get_peer_cert_chain(ssl)
        var offered: [[UInt8]] = []
        if let chain {
            for index in 0..<ccourier_sk_X509_num(chain) {
                if let cert = ccourier_sk_X509_value(chain, index), let digest = X509Facts.spkiSHA256(cert) {
                    offered.append(digest)
                }
            }
        }
        if offered.contains(where: { digest in pins.contains { $0.sha256 == digest } }) { return nil }
        return TLSError(.pinMismatch(
            offered: offered.map { TLSPolicy.Pin(sha256: $0).description }, expected: pins.map(\.description)
        ))
    }

    // MARK: - Application data

    /// Reads plaintext into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadStep {
        precondition(established, "read before the handshake completed")
        guard buffer.count > 0 else { return .bytes(0) }
        OpenSSLErrorQueue.clear()
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            let (errors, lastReason) = OpenSSLErrorQueue.drain()
            // TLS 1.3: the server checks the client's certificate after the client's handshake is over, so its
            // refusal is the first thing a read finds.
            if let rejection = clientCertificateRejection(lastReason) { return .failed(TLSError(rejection, openSSLErrors: errors)) }
            if peerEnded || lastReason == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                return .failed(TLSError(.truncated, openSSLErrors: errors))
            }
            return .failed(TLSError(.sessionFailed, openSSLErrors: errors))
        }
    }

    /// Encrypts all of `bytes` into the output (memory BIOs never push back); nil on success.
    package func write(_ bytes: UnsafeRawBufferPointer) -> TLSError? {
        precondition(established, "write before the handshake completed")
        return Self.write(bytes, to: ssl)
    }

    /// Encrypts all of `bytes` into `ssl`'s output BIO (a memory BIO, which never pushes back); nil on success.
    /// The server engine writes with it too.
    static func write(_ bytes: UnsafeRawBufferPointer, to ssl: OpaquePointer) -> TLSError? {
        guard !bytes.isEmpty else { return nil }
        OpenSSLErrorQueue.clear()
        var written = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &written)
        if result == 1 && written == bytes.count { return nil }
        return TLSError(.sessionFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts)
    }

    /// Queues `close_notify` (send ``takeOutput()`` afterwards, best effort).
    package func shutdown() {
        guard established else { return }
        Self.shutdown(ssl)
    }

    /// Queues `close_notify` on `ssl`, ignoring what OpenSSL says (the session ends either way).
    static func shutdown(_ ssl: OpaquePointer) {
        OpenSSLErrorQueue.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrorQueue.clear()
    }

    // MARK: - Facts

    /// What was negotiated; nil before the handshake completed.
    package var info: TLSSessionInfo? {
        guard established else { return nil }
        var alpnData: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpnData, &alpnLength)
        let alpn = alpnData.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) }
        return TLSSessionInfo(
            version: String(cString: SSL_get_version(ssl)),
            cipher: SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "?",
            alpn: alpnLength > 0 ? alpn : nil,
            resumed: SSL_session_reused(ssl) == 1,
            certificate: SSL_get0_peer_certificate(ssl).map { PeerCertificate(retaining: $0) }
        )
    }
}
