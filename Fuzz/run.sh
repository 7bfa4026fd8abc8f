#!/usr/bin/env bash
# Builds Courier's libFuzzer targets (the Fuzz/ package) and runs each for a while. See docs/fuzzing.md.
#
#   Fuzz/run.sh [seconds-per-target] [target...] [-- extra libFuzzer flags...]
#       seconds-per-target   default 30
#       target               FuzzResponse, FuzzDecoder, FuzzPolicy, FuzzURL, FuzzRecord, FuzzCacheHeaders (default: all)
#
# Builds in release with coverage instrumentation and AddressSanitizer into Fuzz/.build/. Each run starts from
# the seed corpus (Fuzz/corpus/<kind>/; policies/ and the test fixtures for the policy compiler), grows its own
# corpus in Fuzz/.build-fuzz/corpus/<target>/, and writes findings (crash-*, timeout-*, oom-*) to
# Fuzz/.build-fuzz/artifacts/. Exits non-zero at the first target with a finding.
set -euo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$FUZZ/.." && pwd)
OUT="$FUZZ/.build-fuzz"
SECONDS_EACH=${1:-30}
[ $# -gt 0 ] && shift
TARGETS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do TARGETS+=("$1"); shift; done
[ $# -gt 0 ] && shift  # the "--"
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(FuzzResponse FuzzDecoder FuzzPolicy FuzzURL FuzzRecord FuzzCacheHeaders)

# Both flag sets are needed: SwiftPM's --sanitize=fuzzer alone does not add address to swiftc, swiftc keeps only
# its last -sanitize=, and without -parse-as-library the @_cdecl entry point's module gets a main of its own
# that clashes with libFuzzer's.
BUILD=(swift build --package-path "$FUZZ" -c release --sanitize=fuzzer
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xcc -fsanitize=address)

for target in "${TARGETS[@]}"; do
    echo "== building $target"
    "${BUILD[@]}" --product "$target"
done
BIN=$("${BUILD[@]}" --show-bin-path)

for target in "${TARGETS[@]}"; do
    case "$target" in
    FuzzResponse) seeds=("$FUZZ/corpus/response"); flags=(-dict="$FUZZ/dictionaries/http1.dict" -max_len=4096) ;;
    FuzzDecoder) seeds=("$FUZZ/corpus/decoder"); flags=(-max_len=65536) ;;
    FuzzPolicy)
        seeds=("$ROOT/policies" "$ROOT/Tests/CourierPolicyTests/Fixtures" "$ROOT/Tests/CourierLintTests/Fixtures")
        flags=(-dict="$FUZZ/dictionaries/policy.dict" -max_len=16384) ;;
    FuzzURL) seeds=("$FUZZ/corpus/url"); flags=(-dict="$FUZZ/dictionaries/url.dict" -max_len=1024) ;;
    FuzzRecord) seeds=("$FUZZ/corpus/record"); flags=(-max_len=8192) ;;
    FuzzCacheHeaders) seeds=("$FUZZ/corpus/cache-headers"); flags=(-dict="$FUZZ/dictionaries/cache.dict" -max_len=1024) ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
    esac
    mkdir -p "$OUT/corpus/$target" "$OUT/artifacts"
    echo "== fuzzing $target for ${SECONDS_EACH}s"
    # No leak checks (libFuzzer's per input, ASan's at exit): LeakSanitizer reports the lazily initialised Swift
    # globals (the policy language's tables) that the first input allocates.
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$BIN/$target" "$OUT/corpus/$target" "${seeds[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target-" "${flags[@]}" "$@"
done
