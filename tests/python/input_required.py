#!/usr/bin/env python3
"""A real MCP client meets an MCP 2026-07-28 input-required result (SEP-2322).

Usage: input_required.py PATH/TO/seneschal REPO_DIR

REPO_DIR is a git copy of tests/fixtures/mcp-conformance/repo, whose prompt
`test_input_required_result_prompt` requires the argument `context`. The PyPI `mcp` SDK
connects in the 2026-07-28 era with an elicitation callback and gets the prompt without the
argument: seneschal answers `input_required` with a form elicitation for it, the SDK runs the
callback and makes the request again with the answer and the `requestState`, and the prompt
comes back rendered with the value given. A decline leaves the argument missing: -32602.
Exits 0 when every assertion holds; prints what it checked.
"""

from __future__ import annotations

import asyncio
import sys

import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters


async def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: input_required.py PATH/TO/seneschal REPO_DIR")
    binary, repo = sys.argv[1], sys.argv[2]
    asked: list[types.ElicitRequestParams] = []
    answer = {"action": "accept"}

    async def elicit(_context, params: types.ElicitRequestParams):
        asked.append(params)
        if answer["action"] == "accept":
            return types.ElicitResult(action="accept", content={"context": "from python"})
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(command=binary, args=["mcp"], cwd=repo)
    async with Client(params, mode="auto", read_timeout_seconds=30, elicitation_callback=elicit) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        got = await client.get_prompt("test_input_required_result_prompt")
        text = got.messages[0].content.text
        assert text == "Answer within this context: from python", got
        assert len(asked) == 1, asked
        schema = asked[0].requested_schema
        assert schema["required"] == ["context"], schema

        answer["action"] = "decline"
        try:
            await client.get_prompt("test_input_required_result_prompt")
        except MCPError as e:
            assert e.code == -32602 and "context" in str(e), e
        else:
            raise AssertionError("a declined argument must leave the prompt unrendered (-32602)")
        assert len(asked) == 2, asked
    print(
        "ok input-required: the prompt's missing argument was asked by form elicitation, "
        "rendered with the accepted value on the retried request, and -32602 once declined"
    )


if __name__ == "__main__":
    asyncio.run(main())
