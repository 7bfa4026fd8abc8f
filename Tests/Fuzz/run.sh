#!/usr/bin/env bash
# Builds the libFuzzer target for the HTTP/1.1 response parser and runs it.
#
#   Tests/Fuzz/run.sh [seconds] [extra libFuzzer flags...]     (default: 30 seconds)
#
# CourierCore and CourierHTTP1 are compiled here with swiftc (coverage-instrumented, AddressSanitizer), outside
# SwiftPM, into .build-fuzz/. Findings (crash-*, timeout-*) land in .build-fuzz/artifacts/. The corpus starts
# from Tests/Fuzz/corpus/ and grows in .build-fuzz/corpus/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/.build-fuzz"
SECONDS_TO_RUN=${1:-30}
shift || true
mkdir -p "$OUT/artifacts" "$OUT/corpus"

SAN=(-sanitize=fuzzer,address -parse-as-library -O -g)

echo "building CourierCore..."
swiftc "${SAN[@]}" -module-name CourierCore -emit-module -emit-module-path "$OUT/CourierCore.swiftmodule" \
    -emit-library -static -o "$OUT/libCourierCore.a" "$ROOT"/Sources/CourierCore/*.swift
echo "building CourierHTTP1..."
swiftc "${SAN[@]}" -module-name CourierHTTP1 -I "$OUT" -I "$ROOT/Sources/CCourierZlib" \
    -emit-module -emit-module-path "$OUT/CourierHTTP1.swiftmodule" \
    -emit-library -static -o "$OUT/libCourierHTTP1.a" "$ROOT"/Sources/CourierHTTP1/*.swift
echo "building the fuzz target..."
swiftc "${SAN[@]}" -module-name FuzzResponseParser -I "$OUT" -I "$ROOT/Sources/CCourierZlib" \
    "$ROOT/Tests/Fuzz/FuzzResponseParser.swift" -L "$OUT" -lCourierHTTP1 -lCourierCore -lz -lm \
    -o "$OUT/fuzz-response-parser"

echo "fuzzing for ${SECONDS_TO_RUN}s..."
"$OUT/fuzz-response-parser" "$OUT/corpus" "$ROOT/Tests/Fuzz/corpus" \
    -max_total_time="$SECONDS_TO_RUN" -timeout=5 -max_len=4096 -artifact_prefix="$OUT/artifacts/" \
    -dict="$ROOT/Tests/Fuzz/http1.dict" "$@"
