#!/usr/bin/env bash
# What issue 11's instrumentation costs: CPU per request of courier-load against bench-server, this build against
# a baseline courier-load built from the commit before the instrumentation, in the same run, rounds interleaved.
#
#   Benchmarks/run-instrumentation.sh BASELINE_COURIER_LOAD [--rounds N] [--quick]
#
# Build the baseline in a worktree of its own, with this tree's CourierBenchClient.swift,
# CourierLoaderBenchClient.swift and courier-load/main.swift copied in and a LoaderBenchInstruments.swift whose makeService ignores `instrumented`
# (the old DataLoaderService has no instrument parameters); see README.md, "Instrumentation (issue 11)".
#
# Configurations (each on two workloads, sequential and 64 in flight, 100-byte bodies):
#   base-client / client    HTTPClient alone (--client courier): the transport's logger and gauges, no-op
#   base-loader / loader    a DataLoader (--client loader) with the no-op defaults
#   loader-null             a DataLoader with backends that record nothing but are not the no-op ones
#                           (COURIER_INSTRUMENTS=null): Courier's own instrumentation work, without a backend's
#   loader-memory           a DataLoader with real in-memory backends (COURIER_INSTRUMENTS=memory):
#                           swift-metrics' TestMetrics, swift-distributed-tracing's InMemoryTracer, a log handler
#                           keeping lines in memory at `info`
#   loader-untraced         the same without the tracer (COURIER_INSTRUMENT_ONLY=logs,metrics)
#   loader-exported         loader-memory with the tracer's finished spans taken every 10 ms, as an exporter
#                           would (COURIER_TRACE_EXPORT=1): InMemoryTracer otherwise keeps every span for good
#   client-tracer           HTTPClient alone, with the InMemoryTracer calls of one load made beside each request
#                           by the benchmark (COURIER_TRACER_BESIDE=1): a loader that cost nothing beyond the
#                           transport, with this tracer; the floor of the 15 % goal
#   loader-tracer           the loader with the no-op defaults and the same calls beside each request: the
#                           tracer's own work beside a real load, without Courier's code that makes the calls
# CONFIGS="base-loader loader ..." runs only those configurations.
# Each round runs every configuration once, in forward order on odd rounds and backward on even ones, so drift
# of the shared machine falls on both sides. Client pinned to core 0, server to core 1. Loopback only.
set -euo pipefail
cd "$(dirname "$0")"
[ $# -ge 1 ] || { echo "usage: $0 BASELINE_COURIER_LOAD [--rounds N] [--quick]" >&2; exit 2; }
baseline=$1; shift
rounds=5; seq_requests=20000; par_requests=60000
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --quick) rounds=1; seq_requests=2000; par_requests=5000 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
current=.build/release/courier-load
[ -x "$current" ] && [ -x "$baseline" ] || { echo "build both courier-load binaries first" >&2; exit 2; }
mkdir -p .build && gcc -O2 -Wall -o .build/bench-server server/bench-server.c
coproc SERVER { exec taskset -c 1 .build/bench-server; }
read -r _ port <&"${SERVER[0]}"
url="http://127.0.0.1:$port/small"
# The raw JSON lines stay in $INSTRUMENTATION_RESULTS when it is set.
results=${INSTRUMENTATION_RESULTS:-$(mktemp)}
[ -n "${INSTRUMENTATION_RESULTS:-}" ] || trap 'rm -f "$results"' EXIT
: >"$results"

configs=(base-client client client-tracer base-loader loader loader-tracer loader-null loader-untraced loader-memory
    loader-exported)
run() { # round config workload requests concurrency
    local binary=$current client=courier env=()
    case $2 in
        base-client) binary=$baseline ;;
        base-loader) binary=$baseline; client=loader ;;
        loader) client=loader ;;
        loader-null) client=loader; env=(COURIER_INSTRUMENTS=null) ;;
        loader-memory) client=loader; env=(COURIER_INSTRUMENTS=memory) ;;
        loader-untraced) client=loader; env=(COURIER_INSTRUMENTS=memory COURIER_INSTRUMENT_ONLY=logs,metrics) ;;
        loader-exported) client=loader; env=(COURIER_INSTRUMENTS=memory COURIER_TRACE_EXPORT=1) ;;
        client-tracer) env=(COURIER_TRACER_BESIDE=1) ;;
        loader-tracer) client=loader; env=(COURIER_TRACER_BESIDE=1) ;;
    esac
    local line
    line=$(env ${env[@]+"${env[@]}"} taskset -c 0 "$binary" --client "$client" --url "$url" --requests "$4" --concurrency "$5" --max-seconds 60)
    echo "{\"round\":$1,\"config\":\"$2\",\"workload\":\"$3\",\"result\":$line}" >>"$results"
}
if [ -n "${CONFIGS:-}" ]; then read -r -a configs <<<"$CONFIGS"; fi
for round in $(seq "$rounds"); do
    order=("${configs[@]}")
    if [ $((round % 2)) -eq 0 ]; then
        order=()
        for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[$i]}"); done
    fi
    for config in "${order[@]}"; do
        run "$round" "$config" sequential "$seq_requests" 1
        run "$round" "$config" 64-in-flight "$par_requests" 64
    done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def cpu(r, user_only):
    x = r["result"]
    return (x["cpu_user_s"] + (0 if user_only else x["cpu_sys_s"])) / x["requests"] * 1e6
configs = ["base-client", "client", "client-tracer", "base-loader", "loader", "loader-tracer", "loader-null",
           "loader-untraced", "loader-memory", "loader-exported"]
pairs = [("client", "base-client"), ("client-tracer", "base-loader"), ("loader", "base-loader"),
         ("loader-tracer", "base-loader"), ("loader-null", "base-loader"), ("loader-untraced", "base-loader"),
         ("loader-memory", "base-loader"), ("loader-exported", "base-loader")]
for user_only, what in [(False, "CPU (user + system)"), (True, "user CPU")]:
    table = {}
    for r in rows:
        table.setdefault((r["workload"], r["config"]), {})[r["round"]] = cpu(r, user_only)
    for workload in ["sequential", "64-in-flight"]:
        present = [c for c in configs if (workload, c) in table]
        print(f"== {workload}: {what} µs per request, median [range] over {len(table[(workload, present[0])])} rounds")
        for config in present:
            v = list(table[(workload, config)].values())
            print(f"  {config:14} {statistics.median(v):7.2f} [{min(v):.2f}-{max(v):.2f}]")
        for new, base in pairs:
            if (workload, new) not in table or (workload, base) not in table: continue
            a, b = table[(workload, new)], table[(workload, base)]
            ratios = [a[k] / b[k] for k in a if k in b]
            print(f"  {new}/{base}: median {statistics.median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}] (per-round ratios)")
PY
