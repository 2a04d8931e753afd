#!/usr/bin/env python3
"""A real MCP client cancels a long search over Streamable HTTP: the PyPI `mcp` SDK (2.x, the
2026-07-28 era, where closing the request is the cancellation) against `seneschal serve`.

Usage: http_cancel.py PATH/TO/seneschal WORK_DIR

Writes a repository of 80 MB of text under WORK_DIR, starts `seneschal serve` there, and
calls `files_search` with a slow pattern inside an anyio cancel scope that gives up after
half a second. The server's CPU time (from /proc) is then sampled for a second: the search
left alone uses about a second of CPU per second for seconds more; cancelled, it must use
next to nothing. Exits 0 when it does; prints the figures.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import anyio
from mcp import Client

PATTERN = r"(?i)\w+zz\w+"


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_repo(repo: str) -> None:
    line = "fn alpha_beta_gamma(x: u32) -> u32 { x.wrapping_mul(2654435761) ^ 0xdead_beef } // filler text\n"
    body = line * 400
    for m in range(20):
        os.makedirs(os.path.join(repo, f"src/m{m}"), exist_ok=True)
        for f in range(100):
            with open(os.path.join(repo, f"src/m{m}/f{f}.rs"), "w") as out:
                out.write(body)
    subprocess.run(["git", "init", "-q", repo], check=True)


async def search(url: str, give_up: float | None) -> str:
    async with Client(url, read_timeout_seconds=60) as client:
        era = client.protocol_version
        with anyio.move_on_after(give_up if give_up is not None else 1e9) as scope:
            await client.call_tool("files_search", {"pattern": PATTERN, "limit": 5})
        return f"{era}, {'cancelled' if scope.cancelled_caught else 'answered'}"


def sample(pid: int) -> float:
    time.sleep(0.5)
    before = cpu_seconds(pid)
    time.sleep(1.0)
    return cpu_seconds(pid) - before


async def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: http_cancel.py PATH/TO/seneschal WORK_DIR")
    binary, repo = sys.argv[1], os.path.join(sys.argv[2], "repo-cancel")
    write_repo(repo)
    server = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0", "--approval", "trust-client"],
        cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        banner = server.stdout.readline().strip()
        assert banner.startswith("listening on http://"), banner
        url = banner.removeprefix("listening on ") + "/mcp"
        # Left alone (in a task of its own), the search is still busy a second and a half in.
        task = asyncio.create_task(search(url, None))
        await asyncio.sleep(0.01)
        busy = await asyncio.to_thread(sample, server.pid)
        assert busy > 0.5, f"the search left alone used only {busy:.2f} s of CPU: too short to tell"
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(0.5)
        # Cancelled by the client after half a second.
        how = await search(url, 0.5)
        assert how.endswith("cancelled"), how
        idle = await asyncio.to_thread(sample, server.pid)
        assert idle < 0.15, f"after the client cancelled ({how}), the server used {idle:.2f} s of CPU in a second"
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    print(f"ok http cancel: {how}; server CPU in the second after: {idle:.2f} s (left alone: {busy:.2f} s)")


if __name__ == "__main__":
    asyncio.run(main())
