// floor-client: the least work any HTTP/1.1 client can do per request on this machine, as a ceiling for the
// benchmarks' 64-in-flight figure. One thread, one epoll set, C keep-alive connections to 127.0.0.1; each sends
// the same pre-built GET, counts response bytes until the known response length has arrived, and sends the
// next. No parsing, no pool, no timers, no allocation. Its req/s is what the machine and bench-server allow a
// client that costs only its system calls; a real client (parsing, pooling, timeouts, async/await) is below it.
//
//   floor-client PORT PATH RESPONSE_BYTES REQUESTS CONCURRENCY
//
// RESPONSE_BYTES is the size of the whole response (head and body), the same for every request; 0 measures it
// from one untimed request first (the response must have a Content-Length and a head of constant size, as
// bench-server's and nginx's static files have).
//
// Prints one JSON line like http-bench's: client, requests, seconds, req_per_s, cpu_user_s, cpu_sys_s.
// Loopback only; stops after REQUESTS responses or 30 s, whichever comes first.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor-clock.h"

static void die(const char *what) {
    perror(what);
    exit(1);
}

// Sends one request on a fresh (still blocking) connection and returns the size of its whole response.
static long measure_response(int fd, const char *request, int request_len) {
    if (send(fd, request, (size_t)request_len, MSG_NOSIGNAL) != request_len) die("send");
    static char head[1 << 16];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof head - 1) { fprintf(stderr, "floor-client: response head too long\n"); exit(1); }
        ssize_t got = recv(fd, head + have, sizeof head - 1 - have, 0);
        if (got <= 0) die("recv");
        have += (size_t)got;
        head[have] = 0;
        end = strstr(head, "\r\n\r\n");
    }
    long head_len = (long)(end - head) + 4;
    char *length = strcasestr(head, "\r\ncontent-length:");
    if (!length || length > end) { fprintf(stderr, "floor-client: no Content-Length\n"); exit(1); }
    long total = head_len + atol(length + 17);
    for (long left = total - (long)have; left > 0;) {
        ssize_t got = recv(fd, head, sizeof head < (size_t)left ? sizeof head : (size_t)left, 0);
        if (got <= 0) die("recv");
        left -= got;
    }
    return total;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: floor-client PORT PATH RESPONSE_BYTES REQUESTS CONCURRENCY\n");
        return 2;
    }
    int port = atoi(argv[1]);
    long response_bytes = atol(argv[3]), requests = atol(argv[4]);
    int concurrency = atoi(argv[5]);
    if (port <= 0 || response_bytes < 0 || requests <= 0 || concurrency <= 0 || concurrency > 1024) return 2;
    char request[256];
    int request_len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", argv[2], port);

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    int *fds = calloc((size_t)concurrency, sizeof(int));
    long *received = calloc((size_t)concurrency, sizeof(long));
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < concurrency; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
        fds[i] = fd;
    }

    if (response_bytes == 0) response_bytes = measure_response(fds[0], request, request_len);

    double start = now(), deadline = start + 30;
    double user0 = cpu(0), sys0 = cpu(1);
    long sent = 0, done = 0;
    for (int i = 0; i < concurrency && sent < requests; i++, sent++) {
        if (send(fds[i], request, (size_t)request_len, MSG_NOSIGNAL) != request_len) die("send");
    }
    static char buffer[1 << 16];
    struct epoll_event events[64];
    while (done < sent && now() < deadline) {
        int n = epoll_wait(ep, events, 64, 1000);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < n; e++) {
            int i = (int)events[e].data.u32;
            for (;;) {
                ssize_t got = recv(fds[i], buffer, sizeof buffer, MSG_DONTWAIT);
                if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (got <= 0) die("recv");
                received[i] += got;
                if (received[i] < response_bytes) continue;
                received[i] -= response_bytes;  // the server answers one request at a time per connection
                done++;
                if (sent < requests) {
                    if (send(fds[i], request, (size_t)request_len, MSG_NOSIGNAL) != request_len) die("send");
                    sent++;
                }
                if ((size_t)got < sizeof buffer) break;
            }
        }
    }
    double seconds = now() - start;
    printf("{\"client\":\"floor-c\",\"requests\":%ld,\"errors\":%ld,\"concurrency\":%d,\"seconds\":%.4f,"
           "\"req_per_s\":%.1f,\"cpu_user_s\":%.4f,\"cpu_sys_s\":%.4f}\n",
           done, sent - done, concurrency, seconds, (double)done / seconds, cpu(0) - user0, cpu(1) - sys0);
    for (int i = 0; i < concurrency; i++) close(fds[i]);
    return done == requests ? 0 : 1;
}
