#define _GNU_SOURCE
#include <sys/socket.h>
#include <pthread.h>
#include <string.h>
#include "CCourierPosix.h"

int CCourierPosix_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

void CCourierPosix_setThreadName(const char *name) {
    char buffer[16];
    strncpy(buffer, name, sizeof(buffer) - 1);
    buffer[sizeof(buffer) - 1] = 0;
    (void)pthread_setname_np(pthread_self(), buffer);
}
