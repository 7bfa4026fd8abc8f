#!/usr/bin/env bash
# Issue 23's data-loader and memory goals, both figures of each ratio from the same run. Loopback only; every
# run stops by itself (--max-seconds 30), and the server is killed when the script exits.
#
#   Benchmarks/run-loader.sh [--rounds N] [--quick]
#
# bench-server (server/bench-server.c, 100-byte /small) runs on core 1, every client on core 0. Each round runs:
#   sequential     courier-load --client courier and --client loader, 20,000 requests one at a time;
#   64-in-flight   the same two, 60,000 requests with 64 in flight;
#   memory         ahc-load (AsyncHTTPClient alone) and courier-load --client courier (Courier alone), once each
#                  on the 64-in-flight workload, for their peak RSS.
# Each pair's order is reversed every other round, so neither side always runs first. The loader's policy
# claims the host with a rate limit that cannot bind (1,000,000 requests per second, burst 1,000,000) and the
# default no-op instruments (CourierLoaderBenchClient), the conditions issue 23's goals are stated for.
#
# The report gives per workload and client the median and range over the rounds of CPU (user + system) per
# request and of req/s, then the per-round ratios loader / bare client (and courier-load / ahc-load peak RSS)
# with their median and range, and whether each goal's median meets it:
#   CPU per request, sequential and 64 in flight: loader <= 1.25x the bare client;
#   req/s, 64 in flight: loader >= 0.8x the bare client;
#   peak RSS, 64 in flight: courier-load < ahc-load.
# --quick: 2,000 and 5,000 requests, one round (a check that everything runs; not figures to quote).
set -euo pipefail
cd "$(dirname "$0")"
source ./rounds-and-cores.sh  # --rounds N, --quick; client_cpu (core 0), server_cpu (core 1)
seq_requests=20000; par_requests=60000
if [ -n "$quick" ]; then seq_requests=2000; par_requests=5000; rounds=1; fi

mkdir -p .build
gcc -O2 -Wall -o .build/bench-server server/bench-server.c
./clean-courier-modules.sh  # see that script: incremental release builds of Courier here can be stale
swift build -c release --product courier-load >/dev/null
swift build -c release --product ahc-load >/dev/null
load=.build/release/courier-load
ahc=.build/release/ahc-load

results=$(mktemp)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -f "$results"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

coproc SERVER { exec "${server_cpu[@]}" .build/bench-server; }
server_pid=$SERVER_PID
read -r _ port <&"${SERVER[0]}"
url="http://127.0.0.1:$port/small"

run() { # round workload client command...
    local round=$1 workload=$2 client=$3; shift 3
    local doc
    doc=$("${client_cpu[@]}" "$@" --url "$url" --max-seconds 30)
    printf '%s %s %s %s\n' "$round" "$workload" "$client" "$doc" >>"$results"
}
pair() { # round first second: each a client name; both on both timing workloads
    local round=$1 client; shift
    for client in "$@"; do
        run "$round" sequential "$client" "$load" --client "$client" --requests "$seq_requests" --concurrency 1
    done
    for client in "$@"; do
        run "$round" 64-in-flight "$client" "$load" --client "$client" --requests "$par_requests" --concurrency 64
    done
}
memory() { # round ahc|courier...
    local round=$1 client; shift
    for client in "$@"; do
        case $client in
            ahc) run "$round" memory ahc-load "$ahc" --client ahc --requests "$par_requests" --concurrency 64 ;;
            courier) run "$round" memory courier-load "$load" --client courier --requests "$par_requests" \
                --concurrency 64 ;;
        esac
    done
}
for round in $(seq "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then
        pair "$round" courier loader; memory "$round" ahc courier
    else
        pair "$round" loader courier; memory "$round" courier ahc
    fi
done

echo "bench-server, $rounds round(s) of $seq_requests sequential and $par_requests at 64 in flight;" \
    "$([ ${#client_cpu[@]} -gt 0 ] && echo "clients on core 0, server on core 1" || echo unpinned);" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import json, sys, collections, statistics
runs = collections.defaultdict(lambda: collections.defaultdict(dict))  # workload -> client -> round -> doc
for line in open(sys.argv[1]):
    round_, workload, client, doc = line.split(" ", 3)
    d = json.loads(doc)
    d["cpu_us_per_req"] = (d["cpu_user_s"] + d["cpu_sys_s"]) / max(1, d["requests"]) * 1e6
    runs[workload][client][round_] = d

def span(values, spec):
    if not values:
        return "-"
    return f'{format(statistics.median(values), spec)} [{format(min(values), spec)}-{format(max(values), spec)}]'
def values(workload, client, key):
    return [d[key] for d in runs[workload][client].values()]
def ratios(workload, client, peer, key):
    out = []
    for round_, p in runs[workload][peer].items():
        c = runs[workload][client].get(round_)
        if c is not None and p[key]:
            out.append(c[key] / p[key])
    return out

errors = sum(d["errors"] for w in runs.values() for c in w.values() for d in c.values())
print("\nmedian [lowest-highest] over the rounds")
print(f'{"workload":13} {"client":13} {"CPU us/req":>24} {"req/s":>26} {"peak RSS KB":>26} {"errors":>6}')
for workload, clients in runs.items():
    for client in clients:
        print(f'{workload:13} {client:13} {span(values(workload, client, "cpu_us_per_req"), ".1f"):>24} '
              f'{span(values(workload, client, "req_per_s"), ".0f"):>26} '
              f'{span(values(workload, client, "peak_rss_kb"), ".0f"):>26} '
              f'{sum(values(workload, client, "errors")):6}')

print("\nper-round ratios, median [lowest-highest]; a goal is met when the median meets it")
def goal(text, vals, meets):
    if not vals:
        print(f'  {text:50} -')
        return
    met = meets(statistics.median(vals))
    rounds = " ".join(f'{v:.2f}' for v in vals)
    print(f'  {text:50} {span(vals, ".2f"):20} {"met" if met else "NOT MET":8} (rounds: {rounds})')
goal("loader CPU/req, sequential <= 1.25x bare",
     ratios("sequential", "loader", "courier", "cpu_us_per_req"), lambda m: m <= 1.25)
goal("loader CPU/req, 64 in flight <= 1.25x bare",
     ratios("64-in-flight", "loader", "courier", "cpu_us_per_req"), lambda m: m <= 1.25)
goal("loader req/s, 64 in flight >= 0.8x bare",
     ratios("64-in-flight", "loader", "courier", "req_per_s"), lambda m: m >= 0.8)
r = ratios("sequential", "loader", "courier", "req_per_s")
print(f'  {"(no goal) loader req/s, sequential / bare":50} {span(r, ".2f")}')
goal("courier-load peak RSS < ahc-load's (64 in flight)",
     ratios("memory", "courier-load", "ahc-load", "peak_rss_kb"), lambda m: m < 1)
if errors:
    print(f"\nrun-loader.sh: {errors} request(s) failed; the figures above include failed runs' time", file=sys.stderr)
    sys.exit(1)
PY
