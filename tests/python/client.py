#!/usr/bin/env python3
"""A real MCP client against `seneschal mcp`: the PyPI `mcp` SDK over stdio.

Usage: client.py PATH/TO/seneschal [REPO_DIR]

REPO_DIR is a git copy of tests/fixtures/mcp-conformance/repo (its prompts are the knowledge
kind `fixture-prompt`). Connects twice, once letting the SDK negotiate (it probes
`server/discover`, so a dual-era server is served in the 2026-07-28 era) and once forcing the
`initialize` handshake. Each time it lists the tools, calls `capabilities_list` and a failing
`capabilities_show` (logged to the client at warning: set per request in 2026-07-28, by
`logging/setLevel` in the initialize era), reads the resource `seneschal://capabilities`, lists the prompts, gets one
rendered with its arguments and one with an image, sees a missing argument refused, and
completes a prompt argument and a resource template's variable. Exits 0 when every assertion
holds; prints what it checked.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters
from mcp_types import PromptReference, ResourceTemplateReference



async def exercise(binary: str, repo: str, mode: str, expected_version: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp", "--toolsets", "all"], cwd=repo)
    logs: list = []

    async def on_log(message) -> None:
        logs.append(message)

    # The modern era names the log level in each request's _meta; the initialize era sets it
    # once (logging/setLevel, below).
    level = None if mode == "legacy" else "warning"
    async with Client(
        params, mode=mode, read_timeout_seconds=30, logging_callback=on_log, log_level=level
    ) as client:
        assert client.protocol_version == expected_version, (mode, client.protocol_version)
        assert client.server_info is not None and client.server_info.name == "seneschal", client.server_info
        assert client.instructions and "seneschal" in client.instructions

        tools = (await client.list_tools()).tools
        by_name = {t.name: t for t in tools}
        assert "capabilities_list" in by_name, sorted(by_name)
        listed = by_name["capabilities_list"]
        assert listed.annotations is not None
        assert listed.annotations.read_only_hint is True
        # Meaningful only when readOnlyHint is false (MCP), so left out of a read's entry.
        assert listed.annotations.destructive_hint is None
        for t in tools:
            # The hints that differ from MCP's defaults; the effect and approval are the
            # instructions' (ADR 0007), not repeated in each tool's _meta.
            # openWorldHint is stated only where it is false (MCP's default is true): every
            # tool but the one that asks the client's model (knowledge_summarize).
            world = None if t.name == "knowledge_summarize" else False
            assert t.annotations is not None and t.annotations.open_world_hint is world, t.name
            assert not (t.meta or {}).get("seneschal/effect"), t.name

        ok = await client.call_tool("capabilities_list", {"effect": "read"})
        assert ok.is_error is False, ok
        assert ok.structured_content is not None
        caps = ok.structured_content["capabilities"]
        assert caps and all(c["effect"] == "read" for c in caps)
        # The text block is the answer as compact text, not a second copy of the JSON (ADR 0007).
        assert all(c["id"] in ok.content[0].text for c in caps), ok.content[0].text

        if mode == "legacy":
            await client.set_logging_level("warning")
        failed = await client.call_tool("capabilities_show", {"id": "no.such"})
        assert failed.is_error is True, failed
        # The failed call was logged to the client, at warning.
        for _ in range(50):
            if logs:
                break
            await asyncio.sleep(0.02)
        assert [m.level for m in logs] == ["warning"], logs
        assert logs[0].data["tool"] == "capabilities_show" and logs[0].data["code"] == "not_found", logs
        assert failed.structured_content is None
        assert (failed.meta or {}).get("seneschal/error", {}).get("code") == "not_found", failed.meta

        read = await client.read_resource("seneschal://capabilities")
        body = json.loads(read.contents[0].text)
        assert any(c["id"] == "capabilities.list" for c in body["capabilities"])

        prompts = (await client.list_prompts()).prompts
        names = [p.name for p in prompts]
        assert "test_prompt_with_arguments" in names, names
        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        assert got.messages[0].role == "user", got
        assert got.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'", got
        image = await client.get_prompt("test_prompt_with_image")
        assert image.messages[0].content.type == "image" and image.messages[0].content.data, image
        try:
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello"})
        except MCPError as e:
            assert e.code == -32602 and "arg2" in str(e), e
        else:
            raise AssertionError("a missing required argument must be -32602")
        done = await client.complete(
            PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
        assert done.completion.values == ["test", "testValue1"], done
        ids = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="seneschal://knowledge/fixture-prompt/{id}"),
            {"name": "id", "value": "test_prompt_with_i"},
        )
        assert ids.completion.values == ["test_prompt_with_image"], ids

        print(
            f"ok {mode}: protocol {client.protocol_version}, {len(tools)} tools, "
            f"capabilities_list returned {len(caps)} reads, not_found as isError and logged at warning, "
            f"resource read, {len(prompts)} prompts listed, rendered with arguments and an image, "
            f"a missing argument -32602, completions"
        )


async def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: client.py PATH/TO/seneschal [REPO_DIR]")
    binary = sys.argv[1]
    repo = sys.argv[2] if len(sys.argv) > 2 else "."
    await exercise(binary, repo, "auto", "2026-07-28")
    await exercise(binary, repo, "legacy", "2025-11-25")


if __name__ == "__main__":
    asyncio.run(main())
