#ifndef CCOURIER_TEST_SUPPORT_H
#define CCOURIER_TEST_SUPPORT_H
// posix_spawn for the tests' child processes (Python peers, the courier binary, openssl), with the GNU
// extensions the Swift importer does not see (closefrom and chdir file actions).
#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated) in `directory` (NULL: the parent's), its
/// standard input, output and error on the given descriptors (-1: /dev/null), every other descriptor closed
/// and every signal at its default disposition, unblocked. Returns 0 and sets `pid`, or an errno value.
int CCourierTestSupport_spawn(pid_t *_Nonnull pid, const char *_Nonnull path, char *_Nullable const *_Nonnull argv,
                              char *_Nullable const *_Nonnull envp, const char *_Nullable directory, int stdinFD,
                              int stdoutFD, int stderrFD);

/// pipe2(2) with O_CLOEXEC (a GNU extension): both ends close on exec. 0, or -1 with errno.
int CCourierTestSupport_pipe(int fds[_Nonnull 2]);

/// Sets or clears a file's immutable flag (FS_IMMUTABLE_FL, `chattr +i`): even root cannot open it for
/// writing then (EPERM). Needs CAP_LINUX_IMMUTABLE and a file system with the flag. 0, or an errno value.
int CCourierTestSupport_setImmutable(const char *_Nonnull path, int immutable);

#endif
