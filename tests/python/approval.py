#!/usr/bin/env python3
"""A real MCP client is asked to approve, asked to sample, and told of progress.

Usage: approval.py PATH/TO/seneschal REPO_DIR

REPO_DIR is a scratch git repository. `seneschal mcp` runs there with the default approval
policy (`--approval ask`). In each era — the initialize handshake (`elicitation/create` sent
to the client) and 2026-07-28 (an input-required result the SDK answers and retries) — the
PyPI `mcp` SDK, with an elicitation callback:
  * creates a guide with `knowledge_create`: the callback is shown the review sentence and
    accepts, and the file is written; declined, the call fails `not_approved` and no file is
    written, and the audit log holds the refusal;
  * has `knowledge_summarize` ask its model (the sampling callback) for a summary of it;
  * searches 1,200 files with a progress callback and hears the progress of the search.
Exits 0 when every assertion holds; prints what it checked.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters


async def exercise(binary: str, repo: pathlib.Path, mode: str) -> str:
    asked: list[types.ElicitRequestParams] = []
    answer = {"action": "accept"}
    sampled: list[types.CreateMessageRequestParams] = []

    async def elicit(_context, params: types.ElicitRequestParams):
        asked.append(params)
        return types.ElicitResult(action=answer["action"])

    async def sample(_context, params: types.CreateMessageRequestParams):
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="It says how releases are cut."),
            model="test-model",
            stop_reason="endTurn",
        )

    params = StdioServerParameters(command=binary, args=["mcp"], cwd=str(repo))
    async with Client(
        params,
        mode=mode,
        read_timeout_seconds=60,
        elicitation_callback=elicit,
        sampling_callback=sample,
    ) as client:
        era = client.protocol_version

        def create(slug: str) -> dict:
            return {
                "kind": "guide",
                "id": slug,
                "front_matter": {"title": f"Releasing {slug}", "status": "draft"},
                "body": f"# Releasing {slug}\n\nTag, build, publish.\n",
            }

        accepted = f"py-{mode}-accepted"
        done = await client.call_tool("knowledge_create", create(accepted))
        assert done.is_error is False, (era, done)
        assert (repo / "docs/guides" / f"{accepted}.md").is_file(), era
        assert asked and accepted in asked[-1].message, (era, asked[-1].message)

        audit_file = repo / ".seneschal/audit.jsonl"
        refusals = sum(json.loads(line).get("code") == "not_approved" for line in audit_file.read_text().splitlines())
        answer["action"] = "decline"
        declined = f"py-{mode}-declined"
        refused = await client.call_tool("knowledge_create", create(declined))
        assert refused.is_error is True, (era, refused)
        code = (refused.meta or {}).get("seneschal/error", {}).get("code")
        assert code == "not_approved", (era, refused)
        assert not (repo / "docs/guides" / f"{declined}.md").exists(), era
        audit = [json.loads(line) for line in audit_file.read_text().splitlines()]
        assert sum(r.get("code") == "not_approved" for r in audit) == refusals + 1, audit[-3:]

        answer["action"] = "accept"
        uri = f"seneschal://knowledge/guide/{accepted}"
        summary = await client.call_tool("knowledge_summarize", {"uri": uri})
        assert summary.is_error is False, (era, summary)
        assert summary.structured_content["summary"] == "It says how releases are cut.", summary
        assert summary.structured_content["model"] == "test-model", summary
        assert sampled and "Tag, build, publish." in json.dumps(sampled[-1].model_dump(mode="json")), sampled

        heard: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append(progress)

        found = await client.call_tool(
            "files_search", {"pattern": "needle", "glob": "bulk/**"}, progress_callback=on_progress
        )
        assert found.is_error is False, (era, found)
        assert found.structured_content["files_searched"] >= 1200, found.structured_content
        assert heard and heard == sorted(heard), (era, heard)
    return f"{era}: approval asked ({len(asked)}), accepted and declined; sampled once; {len(heard)} progress notifications"


async def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: approval.py PATH/TO/seneschal REPO_DIR")
    binary, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    bulk = repo / "bulk"
    bulk.mkdir(exist_ok=True)
    for i in range(1200):
        (bulk / f"f{i:04}.txt").write_text(f"line {i}\n" + ("needle\n" if i % 100 == 0 else ""))
    for mode in ("legacy", "auto"):
        print("ok approval:", await exercise(binary, repo, mode))


if __name__ == "__main__":
    asyncio.run(main())
