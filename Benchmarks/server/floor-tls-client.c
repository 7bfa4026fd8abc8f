// floor-tls-client: the least work any client on this machine's OpenSSL can do per HTTPS request made on a new
// connection, as a ceiling for the benchmarks' handshake figures. One thread, blocking sockets, one SSL_CTX for
// the whole run; each request is: socket, connect to 127.0.0.1, SSL_new, a TLS 1.3 handshake that verifies the
// chain against CA_FILE and the certificate's IP address (as Courier does; pass `-` to verify nothing, as wrk
// does), one pre-built GET, read until the known response length has arrived, close_notify, close. With
// `resume`, the session of each connection (its TLS 1.3 ticket, read with the response) is offered on the next.
// No parsing, no pool, no timers, no event loop, no allocation of its own: its handshakes/s is what OpenSSL and
// the machine allow; a real client is below it.
//
//   floor-tls-client PORT PATH CA_FILE|- full|resume REQUESTS
//
// Prints one JSON line like http-bench's: client, requests, errors (always 0: any failure stops it), seconds,
// req_per_s, handshakes_per_s, cpu_user_s, cpu_sys_s, tls_resumed. Loopback only; stops after REQUESTS responses
// or 30 s, whichever comes first.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor-clock.h"

static void die(const char *what) {
    fprintf(stderr, "floor-tls-client: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

// One request on a new connection. Returns the bytes of the whole response; `expected` 0 reads until the head
// and its Content-Length say the response is complete. Sets *resumed. Replaces *session with the connection's.
static long one_request(SSL_CTX *ctx, const struct sockaddr_in *to, int verify, const char *request, int request_len,
                        long expected, SSL_SESSION **session, int *resumed) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)to, sizeof *to) != 0) die("connect");
    SSL *ssl = SSL_new(ctx);
    if (!ssl) die("SSL_new");
    if (verify) {
        // Courier checks the certificate against the URL's IP literal (no SNI for IP literals).
        if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1")) die("X509_VERIFY_PARAM_set1_ip_asc");
        SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
    }
    if (*session && !SSL_set_session(ssl, *session)) die("SSL_set_session");
    if (!SSL_set_fd(ssl, fd)) die("SSL_set_fd");
    if (SSL_connect(ssl) != 1) die("SSL_connect");
    *resumed = SSL_session_reused(ssl);
    if (SSL_write(ssl, request, request_len) != request_len) die("SSL_write");
    static char buffer[1 << 16];
    long have = 0;
    while (expected == 0 || have < expected) {
        int got = SSL_read(ssl, buffer + (expected == 0 ? have : 0),
                           (int)(expected == 0 ? sizeof buffer - 1 - (size_t)have : sizeof buffer));
        if (got <= 0) die("SSL_read");
        have += got;
        if (expected == 0) {
            buffer[have] = 0;
            char *end = strstr(buffer, "\r\n\r\n");
            char *length = strcasestr(buffer, "\r\ncontent-length:");
            if (end && length) expected = (end + 4 - buffer) + atol(length + 17);
        }
    }
    if (*session) SSL_SESSION_free(*session);
    *session = SSL_get1_session(ssl);  // TLS 1.3: the ticket nginx sent before the response
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
    return have;
}

int main(int argc, char **argv) {
    if (argc != 6 || (strcmp(argv[4], "full") != 0 && strcmp(argv[4], "resume") != 0)) {
        fprintf(stderr, "usage: floor-tls-client PORT PATH CA_FILE|- full|resume REQUESTS\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    int verify = strcmp(argv[3], "-") != 0;
    int resume = strcmp(argv[4], "resume") == 0;
    long requests = atol(argv[5]);
    char request[512];
    int request_len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);

    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) die("SSL_CTX_new");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn);
    if (verify && SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1) die("SSL_CTX_load_verify_locations");
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);

    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    SSL_SESSION *session = NULL;
    int resumed = 0;
    // One untimed request measures the response's length and, with `resume`, fetches the first ticket.
    long expected = one_request(ctx, &to, verify, request, request_len, 0, &session, &resumed);
    if (!resume) { SSL_SESSION_free(session); session = NULL; }

    long resumed_count = 0, done = 0;
    double start = now(), user = cpu(0), sys = cpu(1);
    while (done < requests && now() - start < 30) {
        one_request(ctx, &to, verify, request, request_len, expected, &session, &resumed);
        if (!resume) { SSL_SESSION_free(session); session = NULL; }
        resumed_count += resumed;
        done++;
    }
    double seconds = now() - start;
    printf("{\"client\":\"floor-tls%s\",\"requests\":%ld,\"errors\":0,\"seconds\":%.4f,\"req_per_s\":%.1f,"
           "\"handshakes_per_s\":%.1f,\"cpu_user_s\":%.4f,\"cpu_sys_s\":%.4f,\"tls_resumed\":%ld}\n",
           verify ? "" : "-noverify", done, seconds, done / seconds, done / seconds, cpu(0) - user, cpu(1) - sys,
           resumed_count);
    if (session) SSL_SESSION_free(session);
    SSL_CTX_free(ctx);
    return 0;
}
