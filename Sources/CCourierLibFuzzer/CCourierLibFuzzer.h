// libFuzzer's entry point for a program with a main of its own (https://llvm.org/docs/LibFuzzer.html, "Using
// libFuzzer as a library"), declared for courier-fuzz. Only a fuzzing build calls it (`#if COURIER_FUZZ`), and
// Fuzz/run.sh links the toolchain's libclang_rt.fuzzer_no_main, which defines it; an ordinary build declares it,
// never references it, and links no libFuzzer. No `link` in the module map for that reason.
#ifndef C_COURIER_LIBFUZZER_H
#define C_COURIER_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Parses libFuzzer's flags and inputs from argc/argv (argv[0] is the program, which -jobs and -fork run again)
/// and fuzzes `callback`; returns (or exits with) libFuzzer's status.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
