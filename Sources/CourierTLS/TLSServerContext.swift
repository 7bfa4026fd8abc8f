internal import CCourierOpenSSL
internal import CourierCore

/// A server's TLS settings (an `SSL_CTX` in server mode): one certificate chain and its key, TLS 1.2 at least, no
/// compression, no renegotiation, no client certificate asked for. Courier is a client; this serves loopback test
/// servers (`CourierTesting`'s `MockServer`), one context per server, shared by its sessions (``TLSServerEngine``).
package final class TLSServerContext: @unchecked Sendable {
    // @unchecked: configured once in init, then only used to create sessions, which OpenSSL allows from any thread.
    let pointer: OpaquePointer

    /// - Parameters:
    ///   - certificatePEM: the server's certificate in PEM (clients are expected to trust its issuer directly).
    ///   - privateKeyPEM: the leaf's private key in PEM, unencrypted.
    /// - Throws: ``TLSError`` (`handshakeFailed`, with OpenSSL's words) when either does not load or they do not match.
    package init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let ctx = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError(.handshakeFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts)
        }
        _ = ccourier_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        _ = SSL_CTX_set_options(ctx, ccourier_client_options())
        let loaded = certificatePEM.withUnsafeBytes { certificate in
            privateKeyPEM.withUnsafeBytes { key in Self.use(certificate, key, in: ctx) }
        }
        guard loaded else {
            let errors = OpenSSLErrorQueue.drain().texts
            SSL_CTX_free(ctx)
            throw TLSError(.handshakeFailed, openSSLErrors: ["the server's certificate or key does not load"] + errors)
        }
        pointer = ctx
    }

    /// Adopts `pointer`, a configured server `SSL_CTX` (its reference passes to this object): for tests that need
    /// settings this type does not offer (a chain from a file, session tickets, a maximum version).
    package init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Loads the certificate and the key into `ctx`; false when either does not load or they do not match.
    private static func use(_ certificatePEM: UnsafeRawBufferPointer, _ keyPEM: UnsafeRawBufferPointer, in ctx: OpaquePointer) -> Bool {
        guard let bio = BIO_new_mem_buf(certificatePEM.baseAddress, Int32(certificatePEM.count)) else { return false }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
        defer { X509_free(certificate) }
        guard SSL_CTX_use_certificate(ctx, certificate) == 1,
            let key = ccourier_read_private_key(keyPEM.baseAddress, Int32(keyPEM.count), "")
        else { return false }
        defer { EVP_PKEY_free(key) }
        return SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1
    }

    deinit {
        SSL_CTX_free(pointer)
    }
}
