internal import CCourierOpenSSL
package import CourierCore

/// The client-side settings every TLS session of one ``TLSPolicy`` shares (an `SSL_CTX`): trust store, minimum
/// version, options, and the session cache for resumption. Building one reads the trust store, so the transport
/// keeps one per policy and reuses it.
///
/// Safe defaults: TLS 1.2 at least; no compression; no renegotiation; the peer verified against the system's
/// trust store (honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`) unless the policy names a CA file, which then
/// replaces it.
package final class TLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX may be used from any thread to create sessions once configured; it is never
    // reconfigured after init. The session cache has its own lock.
    let pointer: OpaquePointer
    package let policy: TLSPolicy
    let sessions = TLSSessionCache()

    /// - Throws: ``TLSError``: `unreadableCAFile` when the CA file cannot be loaded; for the policy's client identity,
    ///   `unreadableClientCertificate`, `unreadableClientKey`, `clientKeyNeedsPassword`, `wrongClientKeyPassword` or
    ///   `clientKeyMismatch`, each naming the file.
    package init(policy: TLSPolicy) throws(TLSError) {
        self.pointer = try Self.makeContext(policy)
        self.policy = policy
    }

    /// A configured `SSL_CTX`; on failure nothing is left allocated.
    private static func makeContext(_ policy: TLSPolicy) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError(.handshakeFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts)
        }
        _ = ccourier_SSL_CTX_set_min_proto_version(ctx, policy.minVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION)
        _ = SSL_CTX_set_options(ctx, ccourier_client_options())
        _ = ccourier_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(ctx) { ssl, session in
            guard let ssl, let session, let link = TLSEngine.Link.of(ssl) else { return 0 }
            return link.sessionArrived(session) ? 1 : 0
        }
        if let identity = policy.clientIdentity {
            do {
                try ClientIdentityLoader.load(identity, into: ctx)
            } catch {
                SSL_CTX_free(ctx)
                throw error
            }
        } else {
            // Called when a server asks for a certificate and there is none: noted, so that a TLS 1.2 server's
            // handshake_failure after it can be told apart from one about ciphers or versions.
            SSL_CTX_set_client_cert_cb(ctx) { ssl, _, _ in
                if let ssl, let link = TLSEngine.Link.of(ssl) { link.certificateRequested = true }
                return 0
            }
        }
        guard policy.verifiesPeer else { return ctx }
        if let caFile = policy.caFile {
            guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
                let errors = OpenSSLErrorQueue.drain().texts
                SSL_CTX_free(ctx)
                throw TLSError(.unreadableCAFile(path: caFile), openSSLErrors: errors)
            }
        } else {
            _ = SSL_CTX_set_default_verify_paths(ctx)
            OpenSSLErrorQueue.clear()
        }
        return ctx
    }

    /// The client certificate's subject, and its end of validity when that has passed (for a server's rejection);
    /// nil when the policy has no client identity.
    var clientCertificate: (subject: String, expiredOn: String?)? {
        policy.clientIdentity == nil ? nil : ClientIdentityLoader.presented(by: pointer)
    }

    deinit {
        SSL_CTX_free(pointer)
    }
}
