#!/usr/bin/env python3
"""A real MCP client against `seneschal serve`: the PyPI `mcp` SDK over Streamable HTTP.

Usage: http_client.py PATH/TO/seneschal REPO_DIR

Starts `seneschal serve` in REPO_DIR (a git copy of tests/fixtures/mcp-conformance/repo),
connects with the initialize handshake (the SDK keeps the `Mcp-Session-Id` the server mints
and opens the session's GET stream), subscribes to a knowledge object, edits its file on disk
and waits for `notifications/resources/updated` on that stream; unsubscribes, edits again and
sees a new object's `notifications/resources/list_changed` arrive with no update before it.
Exits 0 when every assertion holds; prints what it checked.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import warnings

import anyio
from mcp import Client
from mcp_types import ResourceListChangedNotification, ResourceUpdatedNotification

DEADLINE = 10.0


async def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: http_client.py PATH/TO/seneschal REPO_DIR")
    binary, repo = sys.argv[1], sys.argv[2]
    server = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        banner = server.stdout.readline().strip()
        assert banner.startswith("listening on http://"), banner
        url = banner.removeprefix("listening on ") + "/mcp"
        await exercise(url, repo)
    finally:
        server.stdin.close()
        server.wait(timeout=10)


async def exercise(url: str, repo: str) -> None:
    heard: list[object] = []
    arrived = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, (ResourceUpdatedNotification, ResourceListChangedNotification)):
            heard.append(message)
            arrived.set()

    async def next_event() -> object:
        nonlocal arrived
        with anyio.fail_after(DEADLINE):
            while not heard:
                await arrived.wait()
                arrived = anyio.Event()
        return heard.pop(0)

    async with Client(url, mode="legacy", message_handler=on_message, read_timeout_seconds=30) as client:
        assert client.protocol_version == "2025-11-25", client.protocol_version
        caps = client.server_capabilities.resources
        assert caps is not None and caps.subscribe and caps.list_changed, caps

        resources = (await client.list_resources()).resources
        uri = next(r.uri for r in resources if str(r.uri).startswith("seneschal://knowledge/"))
        path = os.path.join(repo, next(p for p in knowledge_files(repo) if stem_of(p) in str(uri)))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(str(uri))
            # The SDK opens the GET stream in the background; give it a moment.
            await anyio.sleep(0.5)
            with open(path, "a", encoding="utf-8") as f:
                f.write("\nEdited by hand.\n")
            got = await next_event()
            assert isinstance(got, ResourceUpdatedNotification), got
            assert str(got.params.uri) == str(uri), got

            await client.unsubscribe_resource(str(uri))
            with open(path, "a", encoding="utf-8") as f:
                f.write("\nEdited again.\n")
            await anyio.sleep(0.8)
            new = os.path.join(os.path.dirname(path), "zz-added-by-the-client.md")
            with open(new, "w", encoding="utf-8") as f:
                f.write(open(path, encoding="utf-8").read().replace(stem_of(path), "zz-added-by-the-client"))
            got = await next_event()
            assert isinstance(got, ResourceListChangedNotification), got

    print(
        f"ok http: protocol 2025-11-25 in a session, {uri} subscribed, an edit on disk heard as "
        f"resources/updated, unsubscribed, a new object heard as resources/list_changed"
    )


def knowledge_files(repo: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        out.extend(os.path.relpath(os.path.join(root, f), repo) for f in files if f.endswith(".md"))
    return sorted(out)


def stem_of(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


if __name__ == "__main__":
    asyncio.run(main())
