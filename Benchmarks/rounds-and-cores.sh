# Sourced by run-loader.sh and run-fleet.sh: their shared command line (`[--rounds N] [--quick]`) and core pinning.
# Sets `rounds` (default 3, 1 to 100), `quick` (empty unless --quick), and the arrays `client_cpu` (core 0) and
# `server_cpu` (core 1), both empty on a machine with fewer than 2 cores.
rounds=3; quick=""
usage() { echo "usage: $0 [--rounds N] [--quick]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift ;;
        --quick) quick=1 ;;
        *) usage ;;
    esac
    shift
done
case $rounds in '' | *[!0-9]*) usage ;; esac
[ "$rounds" -ge 1 ] && [ "$rounds" -le 100 ] || usage

client_cpu=(taskset -c 0); server_cpu=(taskset -c 1)
if [ "$(nproc --all)" -lt 2 ]; then
    echo "$(basename "$0"): fewer than 2 cores, running unpinned" >&2; client_cpu=(); server_cpu=()
fi
