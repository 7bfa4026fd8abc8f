#!/usr/bin/env python3
"""Runs wrk once and prints one JSON line in http-bench's format, so run-http.sh can put wrk beside the clients.

    wrk-json.py [--pin CPU] [--new-connection] [--body-bytes N] URL CONNECTIONS SECONDS

wrk runs with one thread (the client's core is one core in the pinned arrangement), CONNECTIONS connections and
--latency. CPU times and peak RSS are wrk's own, from getrusage(RUSAGE_CHILDREN) around it (its whole run: wrk
has no untimed warm-up, and its set-up is a few milliseconds). --new-connection sends `Connection: close`, so
wrk reconnects after each response, as the load generators do. wrk does not verify the server's certificate.
"""
import argparse, json, re, resource, subprocess, sys

UNITS = {"us": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}

def micros(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    return int(float(m.group(1)) * UNITS[m.group(2)]) if m else None

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pin")
    p.add_argument("--new-connection", action="store_true")
    p.add_argument("--body-bytes", type=int, default=0)
    p.add_argument("url")
    p.add_argument("connections", type=int)
    p.add_argument("seconds", type=float)
    a = p.parse_args()
    cmd = ["wrk", "-t1", f"-c{a.connections}", f"-d{a.seconds:g}s", "--latency", "--timeout", "10s"]
    if a.new_connection:
        cmd += ["-H", "Connection: close"]
    cmd.append(a.url)
    if a.pin is not None:
        cmd = ["taskset", "-c", a.pin] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", out)
    if not m:
        sys.exit(f"wrk-json: cannot read wrk's output:\n{out}")
    requests = int(m.group(1))
    seconds = micros(m.group(2) + m.group(3)) / 1e6
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors += int(non2xx.group(1)) if non2xx else 0
    rate = requests / seconds
    doc = {
        "client": "wrk", "url": a.url, "requests": requests, "errors": errors, "concurrency": a.connections,
        "seconds": round(seconds, 4), "req_per_s": round(rate, 1),
        "p50_us": micros(latency.get("50", "")), "p99_us": micros(latency.get("99", "")),
        "bytes": requests * a.body_bytes, "mb_per_s": round(requests * a.body_bytes / seconds / 1048576, 2),
        # RUSAGE_CHILDREN's ru_maxrss is the largest child's, i.e. wrk's (taskset execs it in place).
        "peak_rss_kb": after.ru_maxrss,
        "cpu_user_s": round(after.ru_utime - before.ru_utime, 4), "cpu_sys_s": round(after.ru_stime - before.ru_stime, 4),
        "new_connection": a.new_connection, "handshakes_per_s": round(rate, 1) if a.new_connection else None,
    }
    print(json.dumps(doc, separators=(",", ":")))

main()
