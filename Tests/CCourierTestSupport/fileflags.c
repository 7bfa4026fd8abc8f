#include <fcntl.h>
#include <errno.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include "CCourierTestSupport.h"

int CCourierTestSupport_setImmutable(const char *path, int immutable) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return errno;
    int flags = 0;
    int result = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
        result = errno;
    } else {
        flags = immutable ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
        if (ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) result = errno;
    }
    close(fd);
    return result;
}
