#!/usr/bin/env bash
# CourierCache's record store against SQLite (GRDB, WAL) as a key-value table, and collectGarbage() over
# 100,000 records (see README.md, "Record store (issue 10)"). Stops by itself and removes what it wrote.
#   Benchmarks/run-cache.sh [--records N] [--sizes 4,256] [--tasks 1,8] [--rounds N] [--gc-records N] [--gc-threads N] [--no-gc]
#   CACHE_BENCH_DIR=/work Benchmarks/run-cache.sh   # where the temporary directory goes (default /tmp)
#   CACHE_BENCH_NICE=-10 Benchmarks/run-cache.sh    # the bench (not the build) under `nice -n -10` (root only), so
#                                                   # that a machine shared with builds measures the stores more
#                                                   # than the scheduler; both sides run in the one process
#   CACHE_BENCH_JOURNALED_GB=24 Benchmarks/run-cache.sh   # run on a fresh ext4 file system with a journal (mkfs.ext4's
#                                                   # defaults), made in a sparse image of that size under
#                                                   # CACHE_BENCH_DIR and loop-mounted (root only); unmounted and
#                                                   # removed at the end. This machine's root file system has no
#                                                   # journal, which changes what creating a file costs (README.md)
set -euo pipefail
cd "$(dirname "$0")"
echo "# load before the build: $(uptime)"
./clean-courier-modules.sh
swift build -c release --product cache-bench >/dev/null
parent="${CACHE_BENCH_DIR:-/tmp}"
image=""
mountpoint=""
dir=""
cleanup() {
    [ -n "$dir" ] && rm -rf "$dir"
    if [ -n "$mountpoint" ]; then
        umount "$mountpoint" || true
        rmdir "$mountpoint" || true
    fi
    [ -n "$image" ] && rm -f "$image"
    return 0
}
trap cleanup EXIT INT TERM
if [ -n "${CACHE_BENCH_JOURNALED_GB:-}" ]; then
    image="$(mktemp "$parent/cache-bench-ext4.XXXXXX")"
    truncate -s "${CACHE_BENCH_JOURNALED_GB}G" "$image"
    mkfs.ext4 -q -F "$image"
    mountpoint="$(mktemp -d "$parent/cache-bench-mnt.XXXXXX")"
    mount -o loop "$image" "$mountpoint"
    echo "# a fresh journaled ext4 (mkfs.ext4 defaults) in $image, loop-mounted on $mountpoint"
    parent="$mountpoint"
fi
dir="$(mktemp -d "$parent/cache-bench.XXXXXX")"
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, $(swift --version 2>/dev/null | head -1)"
echo "# file system of $dir:"
df -T "$dir" | sed 's/^/#   /'
echo "# journals (jbd2) on this machine: $(ls /proc/fs/jbd2 2>/dev/null | tr '\n' ' ')(a device not listed has none)"
echo "# load before the bench (the 1-minute figure includes the build): $(uptime)"
if [ -n "${CACHE_BENCH_NICE:-}" ]; then
    echo "# the bench runs under nice -n $CACHE_BENCH_NICE"
    nice -n "$CACHE_BENCH_NICE" .build/release/cache-bench --dir "$dir" "$@"
else
    .build/release/cache-bench --dir "$dir" "$@"
fi
echo "# load after:  $(uptime)"
