// bench-server: a minimal single-threaded epoll HTTP/1.1 server for Courier's benchmarks, on 127.0.0.1 only.
// It answers GET /small (100-byte body) and GET /big (1 MiB body) with keep-alive, any other path with 404,
// and prints "PORT n" once listening. It exists because nginx could not be installed on these machines
// (apt-get update fails: no gpgv); it is deliberately cheap so the clients' costs dominate.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONN 4096
#define IN_CAP 16384

struct conn {
    int fd;
    char in[IN_CAP];
    size_t in_len;
    const char *out;  // current response (static), or NULL
    size_t out_len, out_off;
    int close_after;
};

static char *small_resp, *big_resp, *nf_resp;
static size_t small_len, big_len, nf_len;
static struct conn *conns[MAX_CONN];

static char *make_response(const char *status, size_t body_len, size_t *out_len) {
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Length: %zu\r\nContent-Type: application/octet-stream\r\n\r\n", status, body_len);
    char *r = malloc(n + body_len);
    memcpy(r, head, n);
    for (size_t i = 0; i < body_len; i++) r[n + i] = (char)('a' + i % 26);
    *out_len = n + body_len;
    return r;
}

static void drop(int ep, struct conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    conns[c->fd] = NULL;
    free(c);
}

// Writes what it can; returns 0 when the response is fully written, 1 when it must wait, -1 on error.
static int flush_out(struct conn *c) {
    while (c->out && c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 1 : (errno == EINTR ? flush_out(c) : -1);
        c->out_off += (size_t)n;
    }
    c->out = NULL;
    return 0;
}

// Starts responses for complete request heads in the buffer, one at a time.
static int serve(int ep, struct conn *c) {
    for (;;) {
        if (c->out) {
            int r = flush_out(c);
            if (r != 0) return r;
            if (c->close_after) return -1;
        }
        char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
        if (!end) return 0;
        size_t head_len = (size_t)(end - c->in) + 4;
        const char *resp = nf_resp; size_t len = nf_len;
        if (c->in_len > 11 && strncmp(c->in, "GET /small ", 11) == 0) { resp = small_resp; len = small_len; }
        else if (c->in_len > 9 && strncmp(c->in, "GET /big ", 9) == 0) { resp = big_resp; len = big_len; }
        c->close_after = memmem(c->in, head_len, "Connection: close", 17) != NULL;
        memmove(c->in, c->in + head_len, c->in_len - head_len);
        c->in_len -= head_len;
        c->out = resp; c->out_len = len; c->out_off = 0;
        (void)ep;
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    small_resp = make_response("200 OK", 100, &small_len);
    big_resp = make_response("200 OK", 1 << 20, &big_len);
    nf_resp = make_response("404 Not Found", 9, &nf_len);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1024)) { perror("listen"); return 1; }
    socklen_t al = sizeof a;
    getsockname(ls, (struct sockaddr *)&a, &al);
    printf("PORT %d\n", ntohs(a.sin_port));
    fflush(stdout);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    // Exit when stdin closes (the benchmark script holds it open).
    ev.events = EPOLLIN; ev.data.fd = 0;
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; perror("epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == 0) {
                char b[64];
                if (read(0, b, sizeof b) <= 0) return 0;
                continue;
            }
            if (fd == ls) {
                for (;;) {
                    int cfd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (cfd < 0) break;
                    if (cfd >= MAX_CONN) { close(cfd); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct conn *c = calloc(1, sizeof *c);
                    c->fd = cfd;
                    conns[cfd] = c;
                    struct epoll_event cev = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.fd = cfd};
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
                }
                continue;
            }
            struct conn *c = conns[fd];
            if (!c) continue;
            int dead = 0;
            if (evs[i].events & EPOLLIN) {
                for (;;) {
                    if (c->in_len == IN_CAP) { dead = 1; break; }
                    ssize_t r = recv(fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
                    if (r > 0) { c->in_len += (size_t)r; continue; }
                    if (r == 0) { dead = 1; }
                    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) dead = 1;
                    break;
                }
            }
            if (!dead && serve(ep, c) < 0) dead = 1;
            if (dead) drop(ep, c);
        }
    }
}
