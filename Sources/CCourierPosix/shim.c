#define _GNU_SOURCE
#include <sys/socket.h>
#include <pthread.h>
#include <string.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
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

int CCourierPosix_setNormalScheduling(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_OTHER, &param);
}

int CCourierPosix_fileIdentity(int fd, const char *path, int flags, uint64_t *device, uint64_t *inode, uint64_t *size,
                               int64_t *birthSeconds, uint32_t *birthNanoseconds, int *hasBirth) {
    struct statx info;
    int result = statx(fd, path, flags, STATX_INO | STATX_SIZE | STATX_BTIME, &info);
    if (result != 0) return result;
    *device = ((uint64_t)info.stx_dev_major << 32) | info.stx_dev_minor;
    *inode = info.stx_ino;
    *size = info.stx_size;
    *hasBirth = (info.stx_mask & STATX_BTIME) ? 1 : 0;
    *birthSeconds = info.stx_btime.tv_sec;
    *birthNanoseconds = info.stx_btime.tv_nsec;
    return 0;
}

int CCourierPosix_renameNoReplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
