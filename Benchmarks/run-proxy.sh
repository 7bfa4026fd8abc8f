#!/usr/bin/env bash
# Keep-alive HTTPS through an HTTP proxy's CONNECT tunnel (issue 25): Courier's bare HTTPClient (courier-load
# with COURIER_PROXY) against curl through the same squid, beside Courier's direct figure, in the same run.
#
#   Benchmarks/run-proxy.sh [--rounds N] [--requests N] [--no-build]
#
# The origin is nginx (Debian's) serving a 100-byte /small over TLS 1.3 on 127.0.0.1 with a CA and a certificate
# this script makes (as run-http.sh --https does); the proxy is squid (Debian's) on 127.0.0.1, no cache, no access
# log but the CONNECTs it counts. Pinned: nginx and squid on core 1 (the proxy beside the server), every client on
# core 0. Sequential (one request in flight), so each client keeps one connection and one tunnel: curl is given
# every URL in one invocation (a config file of `url`/`output` pairs), so it reuses its connection as Courier does.
# Each round runs courier (proxy), curl (proxy) and courier (direct; first in even rounds, last in odd ones),
# REQUESTS requests each (default 5000); the
# report gives each one's req/s per round and the per-round ratio courier/curl, median [range], and the number of
# CONNECTs squid saw per client run (the goal: one for the whole run).
set -euo pipefail
cd "$(dirname "$0")"
rounds=5; requests=5000; build=1
usage() { echo "usage: $0 [--rounds N] [--requests N] [--no-build]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift ;;
        --requests) [ $# -ge 2 ] || usage; requests=$2; shift ;;
        --no-build) build="" ;;
        *) usage ;;
    esac
    shift
done
client_cpu=(taskset -c 0); server_cpu=(taskset -c 1)
if [ "$(nproc --all)" -lt 2 ]; then echo "run-proxy.sh: fewer than 2 cores, running unpinned" >&2; client_cpu=(); server_cpu=(); fi
. ./nginx-lib.sh
command -v nginx >/dev/null || apt_install nginx-light
[ -x /usr/sbin/squid ] || apt_install squid

if [ -n "$build" ]; then
    ./clean-courier-modules.sh
    swift build -c release --product courier-load >/dev/null
fi
load=.build/release/courier-load

dir=$(mktemp -d); chmod 777 "$dir"
nginx_pid=""; squid_pid=""
cleanup() {
    if [ -n "$squid_pid" ]; then kill -9 "$squid_pid" 2>/dev/null || true; fi
    if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/www"
head -c 100 /dev/zero | tr '\0' a >"$dir/www/small"
make_bench_pki "$dir"
cacert=$dir/ca.pem
tls_port=$(free_port)
write_nginx_conf "$dir" 1 "$(tls_server_block "$dir" "$tls_port")"
"${server_cpu[@]}" nginx -c "$dir/nginx.conf" -p "$dir" &
nginx_pid=$!
proxy_port=$(free_port)
cat >"$dir/squid.conf" <<CONF
http_port 127.0.0.1:$proxy_port
pid_filename $dir/squid.pid
cache_log $dir/cache.log
logformat tunnels %rm %ru %>Hs
access_log stdio:$dir/access.log tunnels
cache deny all
coredump_dir $dir
visible_hostname courier-bench
shutdown_lifetime 0 seconds
pinger_enable off
http_access allow all
CONF
"${server_cpu[@]}" squid -N -f "$dir/squid.conf" &
squid_pid=$!
wait_for_port "$tls_port"; wait_for_port "$proxy_port"

url="https://127.0.0.1:$tls_port/small"
proxy="http://127.0.0.1:$proxy_port"
curl_config=$dir/curl.config
for _ in $(seq "$requests"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done >"$curl_config"
connects() { local n=0; if [ -f "$dir/access.log" ]; then n=$(grep -c '^CONNECT' "$dir/access.log" || true); fi; echo "${n:-0}"; }
rate() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["req_per_s"])'; }
# squid writes a tunnel's line when it closes: wait for it, then read the count.
settled_connects() { sleep 0.5; connects; }

echo "round courier_proxy_rps curl_proxy_rps courier_direct_rps ratio connects_courier connects_curl"
ratios=()
for round in $(seq "$rounds"); do
    # The direct run goes first in even rounds and last in odd ones, so neither side always follows curl.
    direct=""
    if [ $((round % 2)) -eq 0 ]; then
        direct=$("${client_cpu[@]}" "$load" --client courier --url "$url" --requests "$requests" --concurrency 1 --cacert "$cacert" | rate)
    fi
    before=$(connects)
    courier=$(COURIER_PROXY=$proxy "${client_cpu[@]}" "$load" --client courier --url "$url" --requests "$requests" --concurrency 1 --cacert "$cacert" | rate)
    after_courier=$(settled_connects)
    start=$(date +%s.%N)
    "${client_cpu[@]}" curl -s --proxy "$proxy" --cacert "$cacert" -K "$curl_config"
    end=$(date +%s.%N)
    after_curl=$(settled_connects)
    curl_rate=$(python3 -c "print(round($requests / ($end - $start), 1))")
    if [ -z "$direct" ]; then
        direct=$("${client_cpu[@]}" "$load" --client courier --url "$url" --requests "$requests" --concurrency 1 --cacert "$cacert" | rate)
    fi
    ratio=$(python3 -c "print(round($courier / $curl_rate, 2))")
    ratios+=("$ratio")
    echo "$round $courier $curl_rate $direct $ratio $((after_courier - before)) $((after_curl - after_courier))"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print(f"courier/curl through the tunnel: median {statistics.median(r):.2f}x [{r[0]:.2f}-{r[-1]:.2f}] (goal >= 1.5x)")
PY
