#!/usr/bin/env bash
# A fresh HTTP cache hit through DataLoader.load against the same request over loopback to nginx (issue 10's
# goal: >= 10x). nginx (one worker, pinned to core 1) serves a 100-byte file with Cache-Control: max-age=3600;
# the bench runs pinned to core 0. See README.md, "HTTP cache hits through the loader".
#   Benchmarks/run-loader-cache.sh [--requests N] [--rounds N] [--no-pin]
set -euo pipefail
cd "$(dirname "$0")"
pin=1; args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --no-pin) pin="" ;;
        *) args+=("$1") ;;
    esac
    shift
done
echo "# load before the build: $(uptime)"
./clean-courier-modules.sh
swift build -c release --product loader-cache-bench >/dev/null
. ./nginx-lib.sh
command -v nginx >/dev/null || apt_install nginx-light
dir=$(mktemp -d); nginx_pid=""
cleanup() { if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi; rm -rf "$dir"; }
trap cleanup EXIT INT TERM
chmod 755 "$dir"; mkdir -p "$dir/www"
head -c 100 /dev/zero | tr '\0' a >"$dir/www/small"
port=$(free_port)
write_nginx_conf "$dir" 1 "    server {
        listen 127.0.0.1:$port;
        root $dir/www;
        location / { default_type application/octet-stream; add_header Cache-Control \"max-age=3600\"; }
    }"
server=(nginx -c "$dir/nginx.conf"); client=(.build/release/loader-cache-bench)
if [ -n "$pin" ]; then server=(taskset -c 1 "${server[@]}"); client=(taskset -c 0 "${client[@]}"); fi
"${server[@]}" & nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/small" && break; sleep 0.1; done
if [ -n "$pin" ]; then pinning="client on core 0, nginx on core 1"; else pinning="not pinned"; fi
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, $pinning"
echo "# load before the bench: $(uptime)"
"${client[@]}" --url "http://127.0.0.1:$port/small" --dir "$dir" "${args[@]}"
echo "# load after: $(uptime)"
