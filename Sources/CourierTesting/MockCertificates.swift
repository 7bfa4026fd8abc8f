internal import CCourierOpenSSL

/// A certificate authority and a server certificate made at run time with libcrypto, for one ``MockServer``: EC
/// P-256 keys, SHA-256 signatures, valid from an hour ago for a week; the CA is `CA:TRUE` and signs certificates
/// only, the server's names `127.0.0.1`, `::1` and `localhost` and serves `serverAuth`. Each server makes its own,
/// so trusting one server's CA trusts no other's.
struct MockCertificates: Sendable {
    /// The CA's certificate in PEM: what a client trusts.
    let authorityPEM: [UInt8]
    /// The server's certificate and private key in PEM.
    let certificatePEM: [UInt8]
    let privateKeyPEM: [UInt8]

    static func make() throws(MockServerError) -> MockCertificates {
        guard let caKey = newKey(), let serverKey = newKey() else { throw failure("cannot make an EC P-256 key") }
        defer {
            EVP_PKEY_free(caKey)
            EVP_PKEY_free(serverKey)
        }
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        guard let ca = certificate(
            commonName: "Courier MockServer CA \(tag)", key: caKey, issuer: nil,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
            ]
        ) else { throw failure("cannot make the CA's certificate") }
        defer { X509_free(ca) }
        guard let leaf = certificate(
            commonName: "Courier MockServer \(tag)", key: serverKey, issuer: (ca, caKey),
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost"),
                (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always"),
            ]
        ) else { throw failure("cannot make the server's certificate") }
        defer { X509_free(leaf) }
        guard let authorityPEM = pem({ PEM_write_bio_X509($0, ca) }),
            let certificatePEM = pem({ PEM_write_bio_X509($0, leaf) }),
            let privateKeyPEM = pem({ PEM_write_bio_PrivateKey($0, serverKey, nil, nil, 0, nil, nil) })
        else { throw failure("cannot write the certificates in PEM") }
        return MockCertificates(authorityPEM: authorityPEM, certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM)
    }

    private static func failure(_ message: String) -> MockServerError {
        ERR_clear_error()
        return MockServerError(.tlsSetup, message)
    }

    private static func newKey() -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1
        else { return nil }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(context, &key) == 1 else { return nil }
        return key
    }

    /// A certificate for `key`, signed by `issuer` (self-signed when nil), with `extensions` in OpenSSL's
    /// configuration syntax.
    private static func certificate(
        commonName: String, key: OpaquePointer, issuer: (certificate: OpaquePointer, key: OpaquePointer)?,
        extensions: [(Int32, String)]
    ) -> OpaquePointer? {
        guard let certificate = X509_new() else { return nil }
        let name = X509_get_subject_name(certificate)
        var made = X509_set_version(certificate, 2) == 1
            && ASN1_INTEGER_set(X509_get_serialNumber(certificate), Int.random(in: 1...Int(Int32.max))) == 1
            && X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil
            && X509_gmtime_adj(X509_getm_notAfter(certificate), 7 * 86400) != nil
            && X509_set_pubkey(certificate, key) == 1
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, Array(commonName.utf8), -1, -1, 0) == 1
            && X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0.certificate) } ?? name) == 1
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate ?? certificate, certificate, nil, nil, 0)
        for (nid, value) in extensions where made {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                made = false
                break
            }
            made = X509_add_ext(certificate, ext, -1) == 1
            X509_EXTENSION_free(ext)
        }
        guard made, X509_sign(certificate, issuer?.key ?? key, EVP_sha256()) > 0 else {
            X509_free(certificate)
            return nil
        }
        return certificate
    }

    /// What `write` puts into a memory BIO.
    private static func pem(_ write: (OpaquePointer) -> Int32) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        let count = ccourier_BIO_pending(bio)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(bio, buffer.baseAddress, Int32(count))))
        }
    }
}
