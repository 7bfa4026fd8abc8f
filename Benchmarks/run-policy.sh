#!/usr/bin/env bash
# Compiles a generated 10,000-service policy and times route look-ups (see README.md). Stops by itself.
#   Benchmarks/run-policy.sh [--services N] [--lookups N] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")"
./clean-courier-modules.sh
swift build -c release --product policy-bench >/dev/null
.build/release/policy-bench "$@"
