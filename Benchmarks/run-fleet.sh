#!/usr/bin/env bash
# Issue 24's speed goals, both figures of each ratio from the same run. Loopback only; every run stops by itself
# (--max-seconds 30), and the servers are killed when the script exits.
#
#   Benchmarks/run-fleet.sh [--rounds N] [--quick]
#
# bench-server (100-byte /small) and redis-server run on core 1, every client on core 0. Each round runs
# courier-load --client loader with a process-scoped limit (`process`) and the same limit with `scope: fleet`
# through that Redis (`fleet`, COURIER_FLEET_REDIS), on two workloads: 10,000 requests one at a time and 40,000
# with 64 in flight; the order is reversed every other round. The limit (1,000,000 per second) never binds.
# Then redis-benchmark runs the fleet's admission script itself (EVALSHA, one key per endpoint, 50 clients,
# pipelined 16 deep) for Redis's own ceiling.
#
# The report gives per workload and scope the median [range] over the rounds of CPU (user + system) per request and
# req/s, then the per-round differences and ratios, and whether each goal's median meets it:
#   extra client CPU per fleet-limited load, sequential and 64 in flight: at most 20 us;
#   req/s at 64 in flight: fleet >= 0.8x process.
# --quick: 1,000 and 4,000 requests, one round.
set -euo pipefail
cd "$(dirname "$0")"
source ./rounds-and-cores.sh  # --rounds N, --quick; client_cpu (core 0), server_cpu (core 1)
seq_requests=10000; par_requests=40000
if [ -n "$quick" ]; then seq_requests=1000; par_requests=4000; rounds=1; fi
command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }

mkdir -p .build
gcc -O2 -Wall -o .build/bench-server server/bench-server.c
./clean-courier-modules.sh  # see that script: incremental release builds of Courier here can be stale
swift build -c release --product courier-load >/dev/null
load=.build/release/courier-load

results=$(mktemp); redis_dir=$(mktemp -d)
server_pid=""; redis_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
    rm -rf "$results" "$redis_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

coproc SERVER { exec "${server_cpu[@]}" .build/bench-server; }
server_pid=$SERVER_PID
read -r _ port <&"${SERVER[0]}"
url="http://127.0.0.1:$port/small"
redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${server_cpu[@]}" redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$redis_dir" \
    --daemonize no >"$redis_dir/log" 2>&1 &
redis_pid=$!
for _ in $(seq 50); do grep -q "Ready to accept connections" "$redis_dir/log" && break; sleep 0.1; done
redis="redis://127.0.0.1:$redis_port"

run() { # round workload scope requests concurrency
    local round=$1 workload=$2 scope=$3 requests=$4 concurrency=$5 doc
    if [ "$scope" = fleet ]; then
        doc=$(COURIER_FLEET_REDIS=$redis "${client_cpu[@]}" "$load" --client loader --url "$url" --requests "$requests" \
            --concurrency "$concurrency" --max-seconds 30)
    else
        doc=$("${client_cpu[@]}" "$load" --client loader --url "$url" --requests "$requests" --concurrency "$concurrency" \
            --max-seconds 30)
    fi
    printf '%s %s %s %s\n' "$round" "$workload" "$scope" "$doc" >>"$results"
}
for round in $(seq "$rounds"); do
    order="process fleet"; [ $((round % 2)) -eq 0 ] && order="fleet process"
    for scope in $order; do run "$round" sequential "$scope" "$seq_requests" 1; done
    for scope in $order; do run "$round" 64-in-flight "$scope" "$par_requests" 64; done
done

# Redis's own ceiling for the admission script: the script's text read out of FleetScripts.swift (not a copy),
# loaded, then EVALSHA with the arguments of a 1,000,000/s limit (interval 1 us, tolerance, burst, longest wait
# 30 s), on random keys (one endpoint key per request, 100,000 of them) from 50 clients, 16 commands per pipeline:
# what one Redis can coordinate when many instances' admissions arrive at once.
script=$(python3 -c '
import re, sys
text = open(sys.argv[1]).read()
body = re.search(r"static let admit = RedisScript\(\"\"\"\n(.*?)\n\s*\"\"\"\)", text, re.S).group(1)
print("\n".join(line[8:] for line in body.split("\n")))
' ../Sources/CourierCoordination/FleetScripts.swift)
sha=$(redis-cli -p "$redis_port" SCRIPT LOAD "$script")
ceiling=$("${client_cpu[@]}" redis-benchmark -p "$redis_port" -n 400000 -c 50 -P 16 -r 100000 -q \
    EVALSHA "$sha" 1 "courier:bench:rl:{__rand_int__}:x" 1 999999 1000000 30000000 2>/dev/null \
    | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -n 1 || true)

echo "bench-server and redis-server on core 1, clients on core 0; $rounds round(s) of $seq_requests sequential" \
    "and $par_requests at 64 in flight; load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "${ceiling:-}" <<'PY'
import json, sys, collections, statistics
runs = collections.defaultdict(lambda: collections.defaultdict(dict))
for line in open(sys.argv[1]):
    round_, workload, scope, doc = line.split(" ", 3)
    d = json.loads(doc)
    d["cpu_us_per_req"] = (d["cpu_user_s"] + d["cpu_sys_s"]) / max(1, d["requests"]) * 1e6
    runs[workload][scope][round_] = d
def span(values, spec):
    if not values: return "-"
    return f'{format(statistics.median(values), spec)} [{format(min(values), spec)}-{format(max(values), spec)}]'
def per_round(workload, key, combine):
    out = []
    for round_, p in runs[workload]["process"].items():
        f = runs[workload]["fleet"].get(round_)
        if f is not None: out.append(combine(f[key], p[key]))
    return out
errors = sum(d["errors"] for w in runs.values() for s in w.values() for d in s.values())
print(f'\n{"workload":13} {"scope":8} {"CPU us/req":>24} {"req/s":>26} {"errors":>6}')
for workload, scopes in runs.items():
    for scope, rs in scopes.items():
        print(f'{workload:13} {scope:8} {span([d["cpu_us_per_req"] for d in rs.values()], ".1f"):>24} '
              f'{span([d["req_per_s"] for d in rs.values()], ".0f"):>26} {sum(d["errors"] for d in rs.values()):6}')
print("\nper-round figures, median [lowest-highest]; a goal is met when the median meets it")
def goal(text, vals, meets, spec):
    if not vals: print(f'  {text:55} -'); return
    print(f'  {text:55} {span(vals, spec):22} {"met" if meets(statistics.median(vals)) else "NOT MET"}')
goal("extra CPU per fleet-limited load, sequential <= 20 us", per_round("sequential", "cpu_us_per_req", lambda f, p: f - p), lambda m: m <= 20, ".1f")
goal("extra CPU per fleet-limited load, 64 in flight <= 20 us", per_round("64-in-flight", "cpu_us_per_req", lambda f, p: f - p), lambda m: m <= 20, ".1f")
goal("req/s at 64 in flight, fleet >= 0.8x process", per_round("64-in-flight", "req_per_s", lambda f, p: f / p), lambda m: m >= 0.8, ".2f")
print(f'  {"(no goal) req/s sequential, fleet / process":55} {span(per_round("sequential", "req_per_s", lambda f, p: f / p), ".2f")}')
print(f"\nredis-benchmark, the admission script (EVALSHA, random keys, 50 clients, pipeline 16): {sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else 'not measured'}")
if errors:
    print(f"\nrun-fleet.sh: {errors} request(s) failed", file=sys.stderr); sys.exit(1)
PY
