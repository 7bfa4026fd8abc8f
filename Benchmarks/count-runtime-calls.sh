#!/usr/bin/env bash
# Counts, per request, the calls courier-load makes to malloc and to the Swift runtime's reference counting,
# object allocation and task functions, with uprobes (perf probe; needs root). Unlike CPU time, these counts
# do not move with the load of a shared machine, so they compare two builds exactly (issue 11, session 11).
#
#   Benchmarks/count-runtime-calls.sh [COURIER_LOAD] [--client loader|courier] [--requests N] [--concurrency N]
#
# COURIER_INSTRUMENTS (none, null, memory) is passed through, as for courier-load itself. Client pinned to
# core 0 and bench-server to core 1; loopback only.
set -euo pipefail
cd "$(dirname "$0")"
binary=.build/release/courier-load
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then binary=$1; shift; fi
client=loader; requests=2000; concurrency=1
while [ $# -gt 0 ]; do
    case $1 in
        --client) client=$2; shift ;;
        --requests) requests=$2; shift ;;
        --concurrency) concurrency=$2; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$binary" ] || { echo "build courier-load first ($binary)" >&2; exit 2; }
libc=$(ldd "$binary" | awk '/\/libc\.so/ {print $3}')
core=$(ldd "$binary" | awk '/libswiftCore\.so/ {print $3}')
concurrency_lib=$(ldd "$binary" | awk '/libswift_Concurrency\.so/ {print $3}')
probes=()
add() { perf probe -q -x "$1" "$2" 2>/dev/null || true; probes+=("-e" "probe_$3:$2"); }
add "$libc" malloc libc
for f in swift_allocObject swift_retain swift_release swift_bridgeObjectRetain; do add "$core" "$f" libswiftCore; done
for f in swift_task_alloc swift_task_switch swift_task_create; do add "$concurrency_lib" "$f" libswift_Concurrency; done
mkdir -p .build && gcc -O2 -Wall -o .build/bench-server server/bench-server.c
coproc SERVER { exec taskset -c 1 .build/bench-server; }
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
read -r _ port <&"${SERVER[0]}"
taskset -c 0 perf stat -x, "${probes[@]}" "$binary" --client "$client" --url "http://127.0.0.1:$port/small" \
    --requests "$requests" --concurrency "$concurrency" 2>&1 >/dev/null \
    | awk -F, -v n="$requests" '$3 ~ /probe_/ { sub(/^probe_[^:]*:/, "", $3); printf "%-28s %8.1f per request\n", $3, $1 / n }'
