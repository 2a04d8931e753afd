#!/usr/bin/env python3
"""Idle resident memory of `seneschal mcp`, as docs/bench/rss.md reports it.

Starts the binary N times, sends `initialize` and `notifications/initialized`, waits 50 ms
(as benches/suite.py does), and prints the median VmRSS with a breakdown of the resident
kilobytes by mapping, from /proc/PID/smaps. With --copy the binary is first copied to a new
file: a freshly written file is wholly in the page cache, so the kernel's fault-around maps
the most pages around each touched one (the worst case: an installed binary). Without it,
the file is measured where it is (benches/suite.py measures target/release/seneschal
straight after the linker wrote it).

Usage: scripts/rss-idle.py [--copy] [--runs N] [BINARY]
"""
import argparse
import collections
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
INIT = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def breakdown(pid: int, binary: str) -> collections.Counter:
    """Resident KiB by kind of mapping."""
    out: collections.Counter = collections.Counter()
    key = ""
    for line in open(f"/proc/{pid}/smaps"):
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            parts = line.split()
            name = parts[5] if len(parts) > 5 else ""
            if name == binary:
                key = {"r--p": "binary r--p: headers, .rela.dyn, .rodata, .eh_frame, .data.rel.ro",
                       "r-xp": "binary r-xp: .text"}.get(parts[1], "binary rw-p: .data, .bss")
            elif "/libc.so" in name:
                key = "libc"
            elif ".so" in name:
                key = "ld.so, libm, libgcc_s"
            elif name in ("[heap]", "[stack]"):
                key = name
            else:
                key = "other anonymous"
        elif line.startswith("Rss:"):
            out[key] += int(line.split()[1])
        elif line.startswith("Anonymous:") and key.startswith("binary r--p"):
            out["  of which anonymous (.data.rel.ro once relocated)"] += int(line.split()[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copy", action="store_true")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("binary", nargs="?", default=str(ROOT / "target/release/seneschal"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT / "target") as tmp:
        binary = os.path.realpath(args.binary)
        if args.copy:
            binary = shutil.copy(binary, os.path.join(tmp, "seneschal"))
        rss, parts = [], collections.defaultdict(list)
        for _ in range(args.runs):
            p = subprocess.Popen([binary, "mcp"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, bufsize=0)
            p.stdin.write(INIT)
            p.stdout.readline()
            p.stdin.write(INITIALIZED)
            time.sleep(0.05)
            for line in open(f"/proc/{p.pid}/status"):
                if line.startswith("VmRSS:"):
                    rss.append(int(line.split()[1]))
            for k, v in breakdown(p.pid, binary).items():
                parts[k].append(v)
            p.stdin.close()
            p.wait()
    load = open("/proc/loadavg").read().split()[0]
    m = statistics.median(rss)
    print(f"VmRSS median {m:.0f} KiB = {m * 1024 / 1e6:.2f} MB (min {min(rss)}, max {max(rss)}; "
          f"{args.runs} runs, load {load}){' [fresh copy]' if args.copy else ''}")
    for k in sorted(parts):
        print(f"  {k:70} {statistics.median(parts[k]):6.0f} KiB")


if __name__ == "__main__":
    main()
