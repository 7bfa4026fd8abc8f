#!/usr/bin/env bash
# Builds Courier's libFuzzer targets (the executable courier-fuzz of the root package, its harnesses in
# Sources/CourierFuzz) for fuzzing and runs each for a while. See docs/fuzzing.md.
#
#   Fuzz/run.sh [seconds-per-target] [target...] [-- extra libFuzzer flags...]
#       seconds-per-target   default 30
#       target               FuzzResponse, FuzzDecoder, FuzzPolicy, FuzzURL, FuzzRecord, FuzzCacheHeaders, FuzzRESP, FuzzRequest (default: all)
#
# Builds in release with coverage instrumentation and AddressSanitizer into Fuzz/.build-fuzz/build/, a build
# directory of its own: the flags differ from every other build's, and would otherwise rebuild the root's .build/.
# Each run starts from the seed corpus (Fuzz/corpus/<kind>/; policies/ and the test fixtures for the policy
# compiler), grows its own corpus in Fuzz/.build-fuzz/corpus/<target>/, and writes findings (crash-*, timeout-*,
# oom-*) to Fuzz/.build-fuzz/artifacts/. Exits non-zero at the first target with a finding.
set -euo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$FUZZ/.." && pwd)
OUT="$FUZZ/.build-fuzz"
SECONDS_EACH=${1:-30}
[ $# -gt 0 ] && shift
TARGETS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do TARGETS+=("$1"); shift; done
[ $# -gt 0 ] && shift  # the "--"
ALL=(FuzzResponse FuzzDecoder FuzzPolicy FuzzURL FuzzRecord FuzzCacheHeaders FuzzRESP FuzzRequest)
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
for target in "${TARGETS[@]}"; do
    [[ " ${ALL[*]} " == *" $target "* ]] || { echo "unknown target $target (targets: ${ALL[*]})" >&2; exit 2; }
done

# courier-fuzz has a main of its own (an ordinary build replays files), which in this build calls libFuzzer's
# LLVMFuzzerRunDriver: so libFuzzer is linked without its main, from the toolchain's compiler-rt, where swiftc
# finds its sanitizer runtimes. libFuzzer is C++ (libstdc++), and clang links it whole, as -fsanitize=fuzzer does.
RESOURCES=$(swift -print-target-info | sed -n 's/.*"runtimeResourcePath": *"\(.*\)".*/\1/p')
LIBFUZZER="$RESOURCES/clang/lib/linux/libclang_rt.fuzzer_no_main-$(uname -m).a"
if [ ! -f "$LIBFUZZER" ]; then
    echo "this Swift toolchain has no libFuzzer ($LIBFUZZER is missing)" >&2
    exit 2
fi
# swiftc's -sanitize=fuzzer would link libFuzzer's main too, so the Swift code gets the instrumentation it implies
# (the same IR) spelled out: AddressSanitizer plus libFuzzer's coverage. The C shims get clang's equivalent.
# COURIER_FUZZ makes courier-fuzz's main call libFuzzer.
BUILD=(swift build --package-path "$ROOT" --scratch-path "$OUT/build" -c release --product courier-fuzz
    --sanitize=address -Xswiftc -sanitize-coverage=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table
    -Xcc -fsanitize=fuzzer-no-link -Xswiftc -DCOURIER_FUZZ
    -Xlinker --whole-archive -Xlinker "$LIBFUZZER" -Xlinker --no-whole-archive -Xlinker -lstdc++)

echo "== building courier-fuzz"
"${BUILD[@]}"
FUZZER="$("${BUILD[@]}" --show-bin-path)/courier-fuzz"

for target in "${TARGETS[@]}"; do
    case "$target" in
    FuzzResponse) seeds=("$FUZZ/corpus/response"); flags=(-dict="$FUZZ/dictionaries/http1.dict" -max_len=4096) ;;
    FuzzRequest) seeds=("$FUZZ/corpus/request"); flags=(-dict="$FUZZ/dictionaries/http1.dict" -max_len=4096) ;;
    FuzzDecoder) seeds=("$FUZZ/corpus/decoder"); flags=(-max_len=65536) ;;
    FuzzPolicy)
        seeds=("$ROOT/policies" "$ROOT/Tests/CourierPolicyTests/Fixtures" "$ROOT/Tests/CourierLintTests/Fixtures")
        flags=(-dict="$FUZZ/dictionaries/policy.dict" -max_len=16384) ;;
    FuzzURL) seeds=("$FUZZ/corpus/url"); flags=(-dict="$FUZZ/dictionaries/url.dict" -max_len=1024) ;;
    FuzzRecord) seeds=("$FUZZ/corpus/record"); flags=(-max_len=8192) ;;
    FuzzCacheHeaders) seeds=("$FUZZ/corpus/cache-headers"); flags=(-dict="$FUZZ/dictionaries/cache.dict" -max_len=1024) ;;
    FuzzRESP) seeds=("$FUZZ/corpus/resp"); flags=(-dict="$FUZZ/dictionaries/resp.dict" -max_len=4096) ;;
    esac
    mkdir -p "$OUT/corpus/$target" "$OUT/artifacts"
    echo "== fuzzing $target for ${SECONDS_EACH}s"
    # No leak checks (libFuzzer's per input, ASan's at exit): LeakSanitizer reports the lazily initialised Swift
    # globals (the policy language's tables) that the first input allocates. No Swift backtracer: on a trap it
    # would take the signal from libFuzzer, whose handler saves the input and prints the stack with ASan's symbols.
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}" \
        "$FUZZER" "$target" "$OUT/corpus/$target" "${seeds[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target-" "${flags[@]}" "$@"
done
