// The system's OpenSSL 3 (libssl, libcrypto), with wrappers only for what Swift cannot import: macros and the
// type-safe stack accessors (static inline functions over OPENSSL_sk_*).
#ifndef CCOURIER_OPENSSL_SHIM_H
#define CCOURIER_OPENSSL_SHIM_H

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

static inline long ccourier_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline int ccourier_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int ccourier_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline long ccourier_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long ccourier_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline int ccourier_SSL_set_app_data(SSL *ssl, void *data) { return SSL_set_app_data(ssl, data); }
static inline void *ccourier_SSL_get_app_data(const SSL *ssl) { return SSL_get_app_data(ssl); }
static inline size_t ccourier_BIO_pending(BIO *bio) { return BIO_ctrl_pending(bio); }
static inline int ccourier_SSL_get_version_number(const SSL *ssl) { return SSL_version(ssl); }

// The SSL object a certificate-verification callback runs for.
static inline SSL *ccourier_X509_STORE_CTX_get_ssl(X509_STORE_CTX *ctx) {
    return (SSL *)X509_STORE_CTX_get_ex_data(ctx, SSL_get_ex_data_X509_STORE_CTX_idx());
}

// STACK_OF(X509)
static inline int ccourier_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *ccourier_sk_X509_value(const STACK_OF(X509) *stack, int i) { return sk_X509_value(stack, i); }
static inline void ccourier_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

// subjectAltName entries: DNS names as text, IP addresses as raw bytes (4 or 16).
typedef void (*ccourier_san_visitor)(void *context, int type, const unsigned char *bytes, int length);
static inline void ccourier_X509_visit_subject_alt_names(X509 *cert, void *context, ccourier_san_visitor visit) {
    GENERAL_NAMES *names = (GENERAL_NAMES *)X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (names == NULL) return;
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        if (name->type == GEN_DNS) {
            visit(context, GEN_DNS, ASN1_STRING_get0_data(name->d.dNSName), ASN1_STRING_length(name->d.dNSName));
        } else if (name->type == GEN_IPADD) {
            visit(context, GEN_IPADD, ASN1_STRING_get0_data(name->d.iPAddress), ASN1_STRING_length(name->d.iPAddress));
        }
    }
    GENERAL_NAMES_free(names);
}

// A memory BIO's answer when it is empty: -1 (retry: more may come) until the peer's end of stream, then 0.
static inline long ccourier_BIO_set_mem_eof_return(BIO *bio, long value) { return BIO_set_mem_eof_return(bio, value); }

// Options every client connection gets: no compression (CRIME), no renegotiation.
static inline uint64_t ccourier_client_options(void) { return SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION; }

static inline void ccourier_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

// A PEM private key from memory, decrypted with `password` (NUL-terminated; "" for none). With a NULL callback
// OpenSSL takes `u` as the passphrase itself: never NULL here, as NULL would make it prompt on the terminal.
static inline EVP_PKEY *ccourier_read_private_key(const void *pem, int length, const char *password) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)(password != NULL ? password : ""));
    BIO_free(bio);
    return key;
}

// The TLS alert number an OpenSSL reason code stands for (SSL_AD_REASON_OFFSET + alert), or -1.
static inline int ccourier_alert_of_reason(int reason) {
    return reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256 ? reason - SSL_AD_REASON_OFFSET : -1;
}

#endif
