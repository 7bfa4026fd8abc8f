#!/usr/bin/env bash
# Writes Fuzz/corpus/record/, FuzzRecord's seeds: record files written by the record store itself, through
# `courier fetch --cache-dir` against Python's http.server on 127.0.0.1 (a response with a body, an empty one,
# one with Vary, and the per-URL Vary index records, one of them with an empty payload). Each seed is the control
# byte 0 (repair nothing) and the file. Run after `swift build` at the root; COURIER overrides the binary.
set -euo pipefail
FUZZ=$(cd "$(dirname "$0")/.." && pwd)
COURIER=${COURIER:-$FUZZ/../.build/debug/courier}
OUT="$FUZZ/corpus/record"
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
mkdir -p "$work/site" "$OUT"
printf 'a small body\n' >"$work/site/small.txt"
: >"$work/site/empty.txt"
for i in $(seq 1 40); do printf 'line %02d of a longer body\n' "$i"; done >"$work/site/longer.txt"
python3 -u -m http.server --bind 127.0.0.1 --directory "$work/site" 0 >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do grep -q "port" "$work/server.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
base="http://127.0.0.1:$port"
"$COURIER" fetch --cache-dir "$work/cache" -o /dev/null "$base/small.txt"
"$COURIER" fetch --cache-dir "$work/cache" -o /dev/null "$base/empty.txt"
"$COURIER" fetch --cache-dir "$work/cache" -o /dev/null -H 'Accept-Language: de' "$base/longer.txt"
rm -f "$OUT"/seed-*
n=0
for file in $(find "$work/cache" -path '*/locks' -prune -o -type f -name '[0-9a-f]*' -print | sort); do
    { printf '\000'; cat "$file"; } >"$OUT/seed-$(printf %02d $n)"
    n=$((n + 1))
done
echo "wrote $n seeds to $OUT"
