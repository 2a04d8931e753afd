#!/usr/bin/env python3
"""Benchmark of `seneschal mcp` over stdio (a report, not a timed test).

Usage: bench_stdio.py PATH/TO/seneschal [REPO_DIR]   (standard library only; Linux, for /proc)

Measures, with the figures printed as Markdown table rows:
  * cold start: process spawn to the first answer line (an `initialize`), 50 runs;
  * `tools/list` round-trip latency p50/p99 (one request in flight), 5,000 requests;
  * `tools/call` of a read capability (`capabilities_show`) p50/p99, 5,000 requests;
  * pipelined throughput: 20,000 requests written by one thread while another reads;
  * VmRSS and VmHWM (peak RSS) of the server before and after a 20,000-request
    `tools/list` burst.
Latencies include this Python client's own write/readline cost, so they are upper bounds.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import threading
import time

INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n'
)


def start(binary: str, repo: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [binary, "mcp"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
    )
    # Unbuffered stdin (each request leaves at once); a large read buffer on stdout, since
    # readline on a raw pipe would read one byte per system call.
    p.stdout = io.BufferedReader(p.stdout, 1 << 20)
    return p


def proc_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(samples: list[float], p: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def cold_start(binary: str, repo: str, runs: int = 50) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = start(binary, repo)
        p.stdin.write(INIT)
        line = p.stdout.readline()
        out.append((time.perf_counter() - t0) * 1e6)
        assert b'"protocolVersion"' in line, line
        p.stdin.close()
        p.wait()
    return out


def round_trips(p: subprocess.Popen, line: bytes, n: int) -> list[float]:
    w, r = p.stdin.fileno(), p.stdout
    samples = []
    for _ in range(200):  # warm-up
        os.write(w, line)
        r.readline()
    for _ in range(n):
        t0 = time.perf_counter()
        os.write(w, line)
        answer = r.readline()
        samples.append((time.perf_counter() - t0) * 1e6)
    assert b'"result"' in answer, answer[:200]
    return samples


def pipelined(p: subprocess.Popen, line: bytes, n: int) -> float:
    payload = line * n

    def writer() -> None:
        view = memoryview(payload)
        while view:
            k = os.write(p.stdin.fileno(), view[: 1 << 16])
            view = view[k:]

    t0 = time.perf_counter()
    th = threading.Thread(target=writer)
    th.start()
    for _ in range(n):
        answer = p.stdout.readline()
    th.join()
    elapsed = time.perf_counter() - t0
    assert b'"result"' in answer, answer[:200]
    return n / elapsed


def main() -> None:
    binary = sys.argv[1]
    repo = sys.argv[2] if len(sys.argv) > 2 else "."
    cold = cold_start(binary, repo)

    p = start(binary, repo)
    p.stdin.write(INIT)
    p.stdout.readline()
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    lst = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    call = (
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"capabilities_show",'
        b'"arguments":{"id":"capabilities.list"}}}\n'
    )
    ping = b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n'
    rss0, hwm0 = proc_kib(p.pid, "VmRSS"), proc_kib(p.pid, "VmHWM")
    os.write(p.stdin.fileno(), lst)
    list_bytes = len(p.stdout.readline())
    c0 = cpu_s(p.pid)
    t_list = round_trips(p, lst, 5000)
    c1 = cpu_s(p.pid)
    t_call = round_trips(p, call, 5000)
    c2 = cpu_s(p.pid)
    rps_ping = pipelined(p, ping, 20000)
    c3 = cpu_s(p.pid)
    rps_call = pipelined(p, call, 20000)
    c4 = cpu_s(p.pid)
    rss1, hwm1 = proc_kib(p.pid, "VmRSS"), proc_kib(p.pid, "VmHWM")
    rps_list = pipelined(p, lst, 20000)
    c5 = cpu_s(p.pid)
    rss2, hwm2 = proc_kib(p.pid, "VmRSS"), proc_kib(p.pid, "VmHWM")
    p.stdin.close()
    code = p.wait()

    print("| measure | result |")
    print("|---|---|")
    print(f"| cold start → first answer (50 runs) | p50 {statistics.median(cold):.0f} µs, p90 {pct(cold, 90):.0f} µs |")
    per = lambda a, b, n: (b - a) / n * 1e6  # noqa: E731
    print(f"| tools/list round trip (5,000) | p50 {pct(t_list, 50):.1f} µs, p99 {pct(t_list, 99):.1f} µs; server CPU {per(c0, c1, 5200):.1f} µs/req |")
    print(f"| tools/call capabilities_show (5,000) | p50 {pct(t_call, 50):.1f} µs, p99 {pct(t_call, 99):.1f} µs; server CPU {per(c1, c2, 5200):.1f} µs/req |")
    print(f"| pipelined ping (20,000) | {rps_ping:,.0f} req/s; server CPU {per(c2, c3, 20000):.1f} µs/req |")
    print(f"| pipelined tools/call capabilities_show (20,000) | {rps_call:,.0f} req/s; server CPU {per(c3, c4, 20000):.1f} µs/req |")
    print(f"| pipelined tools/list (20,000) | {rps_list:,.0f} req/s; server CPU {per(c4, c5, 20000):.1f} µs/req |")
    print(f"| load average during the run | {' '.join(open('/proc/loadavg').read().split()[:3])} on {os.cpu_count()} CPUs |")
    print(f"| RSS after initialize | VmRSS {rss0 / 1024:.1f} MiB, VmHWM {hwm0 / 1024:.1f} MiB |")
    print(f"| RSS after 10,000 round trips + 40,000 pipelined | VmRSS {rss1 / 1024:.1f} MiB, VmHWM {hwm1 / 1024:.1f} MiB |")
    print(f"| RSS after a further 20,000-request tools/list burst | VmRSS {rss2 / 1024:.1f} MiB, VmHWM {hwm2 / 1024:.1f} MiB |")
    print(f"| tools/list answer size | {list_bytes:,} bytes |")
    print(f"| exit code at EOF | {code} |")


if __name__ == "__main__":
    main()
