#define _GNU_SOURCE
#include <sys/socket.h>
#include <pthread.h>
#include <string.h>
#include <sched.h>
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

int CCourierPosix_setBatchScheduling(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_BATCH, &param);
}
