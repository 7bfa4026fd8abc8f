#ifndef CCOURIER_POSIX_H
#define CCOURIER_POSIX_H
// C helpers for what Swift cannot import directly from libc (function-like macros, packed structs).
// Every symbol is prefixed CCourierPosix_.
#endif
