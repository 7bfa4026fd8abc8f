#!/usr/bin/env bash
# Runs http-bench for Courier, AsyncHTTPClient and URLSession against one local server, in the same run, and
# prints each workload's figures as ratios against AsyncHTTPClient. Loopback only; every run stops by itself.
#
#   Benchmarks/run-http.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")"
quick=${1:-}

mkdir -p .build
gcc -O2 -Wall -o .build/bench-server server/bench-server.c
./clean-courier-modules.sh  # see that script: incremental release builds of Courier here can be stale
swift build -c release --product http-bench >/dev/null
bench=.build/release/http-bench

# The server exits when this script ends (its stdin closes).
coproc SERVER { exec .build/bench-server; }
read -r _ port <&"${SERVER[0]}"
url="http://127.0.0.1:$port"

seq_requests=20000; par_requests=50000; big_requests=2000
if [ "$quick" = "--quick" ]; then seq_requests=2000; par_requests=5000; big_requests=200; fi

results=$(mktemp)
run() { # workload client args...
    local workload=$1 client=$2; shift 2
    printf '%s %s\n' "$workload" "$("$bench" --client "$client" "$@" --max-seconds 30)" >>"$results"
}
for round in 1 2; do
    for client in courier ahc urlsession; do
        run sequential-100B "$client" --url "$url/small" --requests "$seq_requests" --concurrency 1
        run 64-in-flight "$client" --url "$url/small" --requests "$par_requests" --concurrency 64
        run 1MiB-bodies "$client" --url "$url/big" --requests "$big_requests" --concurrency 1
    done
done

python3 - "$results" <<'PY'
import json, sys, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    workload, doc = line.split(" ", 1)
    d = json.loads(doc)
    d["cpu_us_per_req"] = (d["cpu_user_s"] + d["cpu_sys_s"]) / max(1, d["requests"]) * 1e6
    rows[workload][d["client"]].append(d)
def best(runs, key, high=True):
    return (max if high else min)(r[key] for r in runs)
print(f'{"workload":18} {"client":10} {"req/s":>9} {"MB/s":>8} {"p50 us":>7} {"p99 us":>7} {"CPU us/req":>10} {"RSS KB":>7} {"errors":>6}')
for workload, clients in rows.items():
    for client, runs in clients.items():
        print(f'{workload:18} {client:10} {best(runs,"req_per_s"):9.0f} {best(runs,"mb_per_s"):8.1f} '
              f'{best(runs,"p50_us",False):7} {best(runs,"p99_us",False):7} {best(runs,"cpu_us_per_req",False):10.1f} '
              f'{best(runs,"peak_rss_kb",False):7} {sum(r["errors"] for r in runs):6}')
print("\nratios, Courier / AsyncHTTPClient (best of two rounds each):")
for workload, clients in rows.items():
    c, a = clients["courier"], clients["ahc"]
    print(f'  {workload:18} req/s x{best(c,"req_per_s")/best(a,"req_per_s"):.2f}  MB/s x{best(c,"mb_per_s")/best(a,"mb_per_s"):.2f}  '
          f'CPU/req x{best(c,"cpu_us_per_req",False)/best(a,"cpu_us_per_req",False):.2f}  '
          f'peak RSS x{best(c,"peak_rss_kb",False)/best(a,"peak_rss_kb",False):.2f}')
PY
rm -f "$results"
