#!/usr/bin/env bash
# Runs http-bench for Courier, AsyncHTTPClient and URLSession against one local server, in the same run, and
# prints each workload's figures as ratios against AsyncHTTPClient. Loopback only; every run stops by itself.
#
#   Benchmarks/run-http.sh [--quick] [--rounds N] [--server bench|nginx]
#
# The server is server/bench-server.c (default: a minimal single-threaded epoll server, so the clients' own costs
# dominate) or nginx from Debian's packages (installed by this script if missing) serving two static files with
# NGINX_WORKERS worker processes (default 1), both on 127.0.0.1 only.
#
# Each round runs every client once on every workload, one after the other, so a ratio taken within a round
# compares runs seconds apart. The report gives each client's best round, and each ratio's median and range over
# the rounds (the figure to quote: on this shared machine a client's runs spread further apart than most changes
# move them).
#
# Two rows are references, not peers:
#   courier-loop  Courier with the load generator's workers on Courier's event loop (COURIER_CALLER_ON_LOOP=1),
#                 the configuration HTTPClientConfiguration recommends for callers that run on the loop;
#   floor-c       server/floor-client.c, a C client that does nothing but its system calls (no parsing, pool,
#                 timers or allocation): the most any client can get from this machine and server.
set -euo pipefail
cd "$(dirname "$0")"
quick=""; rounds=3; server=bench
usage() { echo "usage: $0 [--quick] [--rounds N] [--server bench|nginx]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift ;;
        --server) [ $# -ge 2 ] || usage; server=$2; shift ;;
        *) usage ;;
    esac
    shift
done
case $server in bench|nginx) ;; *) usage ;; esac

mkdir -p .build
gcc -O2 -Wall -o .build/bench-server server/bench-server.c
gcc -O2 -Wall -o .build/floor-client server/floor-client.c
./clean-courier-modules.sh  # see that script: incremental release builds of Courier here can be stale
swift build -c release --product http-bench >/dev/null
bench=.build/release/http-bench

results=$(mktemp)
nginx_dir=""; nginx_pid=""
cleanup() {
    if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi
    if [ -n "$nginx_dir" ]; then rm -rf "$nginx_dir"; fi
    rm -f "$results"
}
trap cleanup EXIT

if [ "$server" = nginx ]; then
    if ! command -v nginx >/dev/null; then
        apt-get install -y nginx-light >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null; }
    fi
    nginx_dir=$(mktemp -d)
    chmod 755 "$nginx_dir"  # nginx's workers run as nobody and must read the files
    mkdir -p "$nginx_dir/www"
    head -c 100 /dev/zero | tr '\0' a >"$nginx_dir/www/small"
    head -c 1048576 /dev/zero | tr '\0' a >"$nginx_dir/www/big"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # One worker, no access log, and keep-alive connections never closed by count (nginx's default closes one
    # after 1,000 requests, which would measure reconnects).
    cat >"$nginx_dir/nginx.conf" <<CONF
worker_processes ${NGINX_WORKERS:-1};
daemon off;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log;
events { worker_connections 1024; use epoll; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    client_body_temp_path $nginx_dir/tmp;
    proxy_temp_path $nginx_dir/tmp;
    fastcgi_temp_path $nginx_dir/tmp;
    uwsgi_temp_path $nginx_dir/tmp;
    scgi_temp_path $nginx_dir/tmp;
    server {
        listen 127.0.0.1:$port;
        root $nginx_dir/www;
        location / { default_type application/octet-stream; }
    }
}
CONF
    nginx -c "$nginx_dir/nginx.conf" -p "$nginx_dir" &
    nginx_pid=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
else
    # The server exits when this script ends (its stdin closes).
    coproc SERVER { exec .build/bench-server; }
    read -r _ port <&"${SERVER[0]}"
fi
url="http://127.0.0.1:$port"

seq_requests=20000; par_requests=100000; big_requests=2000
if [ -n "$quick" ]; then seq_requests=2000; par_requests=5000; big_requests=200; rounds=1; fi

run() { # round workload client args...
    local round=$1 workload=$2 client=$3; shift 3
    local env=() as=$client
    if [ "$client" = courier-loop ]; then env=(COURIER_CALLER_ON_LOOP=1); as=courier; fi
    local doc
    doc=$(env "${env[@]}" "$bench" --client "$as" "$@" --max-seconds 30)
    printf '%s %s %s %s\n' "$round" "$workload" "$client" "$doc" >>"$results"
}
floor() { # round workload requests concurrency
    printf '%s %s floor-c %s\n' "$1" "$2" \
        "$(.build/floor-client "$port" /small 0 "$3" "$4")" >>"$results"
}
for round in $(seq "$rounds"); do
    for client in courier courier-loop ahc urlsession; do
        run "$round" sequential-100B "$client" --url "$url/small" --requests "$seq_requests" --concurrency 1
        run "$round" 64-in-flight "$client" --url "$url/small" --requests "$par_requests" --concurrency 64
        run "$round" 1MiB-bodies "$client" --url "$url/big" --requests "$big_requests" --concurrency 1
    done
    floor "$round" sequential-100B "$seq_requests" 1
    floor "$round" 64-in-flight "$par_requests" 64
done

python3 - "$results" <<'PY'
import json, sys, collections, statistics
runs = collections.defaultdict(lambda: collections.defaultdict(dict))  # workload -> client -> round -> doc
for line in open(sys.argv[1]):
    round_, workload, client, doc = line.split(" ", 3)
    d = json.loads(doc)
    d["cpu_us_per_req"] = (d["cpu_user_s"] + d["cpu_sys_s"]) / max(1, d["requests"]) * 1e6
    runs[workload][client][round_] = d
def best(docs, key, high=True):
    values = [d[key] for d in docs if key in d]
    return ((max if high else min)(values)) if values else None
def fmt(value, spec):
    width = int(spec.rstrip("dfs").split(".")[0])
    return format(value, spec) if value is not None else "-".rjust(width)
print(f'{"workload":16} {"client":12} {"req/s":>9} {"MB/s":>8} {"p50 us":>7} {"p99 us":>7} {"CPU us/req":>10} {"RSS KB":>7} {"errors":>6}')
for workload, clients in runs.items():
    for client, by_round in clients.items():
        docs = list(by_round.values())
        print(f'{workload:16} {client:12} {fmt(best(docs,"req_per_s"),"9.0f")} {fmt(best(docs,"mb_per_s"),"8.1f")} '
              f'{fmt(best(docs,"p50_us",False),"7d")} {fmt(best(docs,"p99_us",False),"7d")} '
              f'{fmt(best(docs,"cpu_us_per_req",False),"10.1f")} {fmt(best(docs,"peak_rss_kb",False),"7d")} '
              f'{sum(d["errors"] for d in docs):6}')
print("\nratios against AsyncHTTPClient in the same round: median [lowest-highest] over the rounds")
def ratios(workload, client, key):
    out = []
    for round_, a in runs[workload]["ahc"].items():
        c = runs[workload].get(client, {}).get(round_)
        if c is None or key not in c or not a.get(key):
            continue
        out.append(c[key] / a[key])
    return out
def show(values):
    if not values:
        return "-"
    return f'x{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]'
for workload in runs:
    for client in ("courier", "courier-loop", "floor-c"):
        if client not in runs[workload]:
            continue
        line = f'  {workload:16} {client:12} req/s {show(ratios(workload, client, "req_per_s"))}'
        if client != "floor-c":
            line += (f'  MB/s {show(ratios(workload, client, "mb_per_s"))}'
                     f'  CPU/req {show(ratios(workload, client, "cpu_us_per_req"))}'
                     f'  peak RSS {show(ratios(workload, client, "peak_rss_kb"))}')
        print(line)
PY
