#!/usr/bin/env bash
# CourierCache's record store against SQLite (GRDB, WAL) as a key-value table, and collectGarbage() over
# 100,000 records (see README.md, "Record store (issue 10)"). Stops by itself and removes what it wrote.
#   Benchmarks/run-cache.sh [--records N] [--sizes 4,256] [--tasks 1,8] [--rounds N] [--gc-records N] [--gc-threads N] [--no-gc]
#   CACHE_BENCH_DIR=/work Benchmarks/run-cache.sh   # where the temporary directory goes (default /tmp)
#   CACHE_BENCH_NICE=-10 Benchmarks/run-cache.sh    # the bench (not the build) under `nice -n -10` (root only), so
#                                                   # that a machine shared with builds measures the stores more
#                                                   # than the scheduler; both sides run in the one process
set -euo pipefail
cd "$(dirname "$0")"
echo "# load before the build: $(uptime)"
./clean-courier-modules.sh
swift build -c release --product cache-bench >/dev/null
parent="${CACHE_BENCH_DIR:-/tmp}"
dir="$(mktemp -d "$parent/cache-bench.XXXXXX")"
trap 'rm -rf "$dir"' EXIT INT TERM
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, $(swift --version 2>/dev/null | head -1)"
echo "# file system of $dir:"
df -T "$dir" | sed 's/^/#   /'
echo "# load before the bench (the 1-minute figure includes the build): $(uptime)"
if [ -n "${CACHE_BENCH_NICE:-}" ]; then
    echo "# the bench runs under nice -n $CACHE_BENCH_NICE"
    nice -n "$CACHE_BENCH_NICE" .build/release/cache-bench --dir "$dir" "$@"
else
    .build/release/cache-bench --dir "$dir" "$@"
fi
echo "# load after:  $(uptime)"
