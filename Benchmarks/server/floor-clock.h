// The floor clients' clocks: wall time on the monotonic clock, and this process's user or system CPU time.
#ifndef FLOOR_CLOCK_H
#define FLOOR_CLOCK_H
#include <sys/resource.h>
#include <time.h>

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline double cpu(int sys) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    struct timeval t = sys ? u.ru_stime : u.ru_utime;
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}
#endif
