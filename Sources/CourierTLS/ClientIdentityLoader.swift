internal import CCourierOpenSSL
internal import CourierCore

/// Puts a ``ClientIdentity`` into an `SSL_CTX`: the certificate chain, then the key (decrypted with the identity's
/// password), then the check that they are a pair. Each failure is a typed ``TLSError`` naming the file, found
/// before any connection is made; the key's bytes and the password never leave this function.
enum ClientIdentityLoader {
    /// The largest key file read (a PEM RSA 16384-bit key is about 13 KB).
    private static let maxKeyBytes = 1 << 20

    static func load(_ identity: ClientIdentity, into ctx: OpaquePointer) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard SSL_CTX_use_certificate_chain_file(ctx, identity.certificateFile) == 1 else {
            throw TLSError(.unreadableClientCertificate(path: identity.certificateFile), openSSLErrors: OpenSSLErrorQueue.drain().texts)
        }
        let keyPath = identity.effectiveKeyFile
        let pem: [UInt8]
        do {
            pem = try SystemCall.readFile(keyPath, maxBytes: maxKeyBytes)
        } catch {
            throw TLSError(.unreadableClientKey(path: keyPath), openSSLErrors: ["\(error)"])
        }
        let encrypted = Self.isEncrypted(pem)
        let password = identity.resolvedPassword
        if encrypted && (password ?? "").isEmpty {
            throw TLSError(.clientKeyNeedsPassword(path: keyPath))
        }
        let key = pem.withUnsafeBytes { bytes in
            ccourier_read_private_key(bytes.baseAddress, Int32(bytes.count), password ?? "")
        }
        guard let key else {
            let errors = OpenSSLErrorQueue.drain().texts
            throw TLSError(encrypted ? .wrongClientKeyPassword(path: keyPath) : .unreadableClientKey(path: keyPath), openSSLErrors: errors)
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(ctx, key) == 1, SSL_CTX_check_private_key(ctx) == 1 else {
            let errors = OpenSSLErrorQueue.drain().texts
            throw TLSError(.clientKeyMismatch(certificatePath: identity.certificateFile, keyPath: keyPath), openSSLErrors: errors)
        }
    }

    /// Whether a PEM file holds an encrypted key: PKCS #8's `ENCRYPTED PRIVATE KEY`, or the traditional form's
    /// `Proc-Type: 4,ENCRYPTED` header.
    static func isEncrypted(_ pem: [UInt8]) -> Bool {
        let text = String(decoding: pem, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }

    /// The subject of the context's certificate, and its end of validity when that has passed; nil without one.
    static func presented(by ctx: OpaquePointer) -> (subject: String, expiredOn: String?)? {
        guard let cert = SSL_CTX_get0_certificate(ctx) else { return nil }
        let notAfter = X509_get0_notAfter(cert)
        let expired = notAfter.map { X509_cmp_current_time($0) < 0 } ?? false
        return (X509Facts.subject(cert), expired ? X509Facts.time(notAfter) : nil)
    }
}
