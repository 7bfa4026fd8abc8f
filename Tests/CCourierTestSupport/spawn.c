#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include "CCourierTestSupport.h"

int CCourierTestSupport_spawn(pid_t *pid, const char *path, char *const *argv, char *const *envp,
                              const char *directory, int stdinFD, int stdoutFD, int stderrFD) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    const int given[3] = {stdinFD, stdoutFD, stderrFD};
    for (int target = 0; target < 3 && result == 0; target++) {
        if (given[target] < 0) {
            result = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
        } else {
            // dup2 onto itself clears FD_CLOEXEC (glibc 2.29 and later).
            result = posix_spawn_file_actions_adddup2(&actions, given[target], target);
        }
    }
    // Nothing else leaks into the child: not another peer's pipe (which would keep that peer alive), not a
    // test server's connection (whose close the client would then never see).
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &all);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int CCourierTestSupport_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
