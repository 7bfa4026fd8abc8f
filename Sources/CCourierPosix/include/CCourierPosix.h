#ifndef CCOURIER_POSIX_H
#define CCOURIER_POSIX_H
// C helpers for what Swift cannot import directly from libc: headers the Glibc module leaves out
// (epoll, eventfd) and GNU extensions that need _GNU_SOURCE (accept4, pthread_setname_np, statx).
// Every symbol is prefixed CCourierPosix_.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
/// What identifies one version of a file: statx(2)'s device, inode, size and birth time (a file replaced by
/// rename(2) is a new inode with a new birth time; writes in place keep both). `hasBirth` is 0 where the file
/// system records no birth time. `path` is relative to `fd` when `fd` is not AT_FDCWD, and empty with
/// AT_EMPTY_PATH for the descriptor itself. 0 on success, -1 with errno.
int CCourierPosix_fileIdentity(int fd, const char *_Nonnull path, int flags, uint64_t *_Nonnull device,
                               uint64_t *_Nonnull inode, uint64_t *_Nonnull size, int64_t *_Nonnull birthSeconds,
                               uint32_t *_Nonnull birthNanoseconds, int *_Nonnull hasBirth);

#endif
#include <sys/socket.h>
#include <sys/types.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>

/// accept4(2) (a GNU extension; needs _GNU_SOURCE, which the Swift importer does not define).
int CCourierPosix_accept4(int fd, struct sockaddr *_Nullable addr, socklen_t *_Nullable len, int flags);

/// Names the calling thread (best effort; truncated to 15 bytes by the kernel).
void CCourierPosix_setThreadName(const char *_Nonnull name);

/// sched_setscheduler(2) of the calling thread to SCHED_BATCH (a GNU name) at priority 0; -1 with errno on failure.
int CCourierPosix_setBatchScheduling(void);

/// sched_setscheduler(2) of the calling thread back to SCHED_OTHER at priority 0; -1 with errno on failure.
int CCourierPosix_setNormalScheduling(void);

/// What identifies one version of a file: statx(2)'s device, inode, size and birth time (a file replaced by
/// rename(2) is a new inode with a new birth time; writes in place keep both). `hasBirth` is 0 where the file
/// system records no birth time. `path` is relative to `fd` when `fd` is not AT_FDCWD, and empty with
/// AT_EMPTY_PATH for the descriptor itself. 0 on success, -1 with errno.
int CCourierPosix_fileIdentity(int fd, const char *_Nonnull path, int flags, uint64_t *_Nonnull device,
                               uint64_t *_Nonnull inode, uint64_t *_Nonnull size, int64_t *_Nonnull birthSeconds,
                               uint32_t *_Nonnull birthNanoseconds, int *_Nonnull hasBirth);

/// renameat2(2) with RENAME_NOREPLACE: renames `from` to `to` only if `to` does not exist (EEXIST otherwise), in
/// one atomic step. EINVAL where the file system does not support the flag. 0, or -1 with errno.
int CCourierPosix_renameNoReplace(const char *_Nonnull from, const char *_Nonnull to);

#endif
