"""The agent of the scripted desk session: ordinary tasks in a real repository through
`seneschal mcp`, with the PyPI `mcp` SDK's defaults (no elicitation callback, so the client
cannot be asked; no read timeout), while the person decides on the desk in the cockpit (the
Chromium script beside it). A write answered that its approval is pending is made again, as an
agent does when told so. It prints one JSON line: the tasks and their calls, how long each
first pending answer took, the questions the agent met and the bytes of every answer.

Usage: python session-agent.py path/to/seneschal REPO   (REPO: a git copy of adr-tools)"""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters


def git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, text=True, capture_output=True).stdout


class Agent:
    def __init__(self, client: Client):
        self.client = client
        self.calls: dict[str, int] = {}
        self.task = ""
        self.pending: list[dict] = []
        self.bytes = 0

    async def call(self, tool: str, args: dict) -> dict:
        """Calls `tool`; a pending approval is called again until it is decided."""
        while True:
            self.calls[self.task] = self.calls.get(self.task, 0) + 1
            started = time.monotonic()
            result = await self.client.call_tool(tool, args)
            took = time.monotonic() - started
            dumped = result.model_dump(by_alias=True, exclude_none=True)
            self.bytes += len(json.dumps(dumped, separators=(",", ":")))
            error = (dumped.get("_meta") or {}).get("seneschal/error") or {}
            data = error.get("data") or {}
            if result.is_error and data.get("pending"):
                text = result.content[0].text
                assert "same call again" in text and "cockpit" in text, text
                self.pending.append({"tool": tool, "desk": data["desk"], "seconds": round(took, 3)})
                continue
            assert result.is_error is False, (self.task, tool, args, dumped)
            return result.structured_content or {}


async def session(binary: str, repo: pathlib.Path) -> dict:
    params = StdioServerParameters(command=binary, args=["mcp", "--approval", "ask"], cwd=str(repo))
    async with Client(params) as client:
        a = Agent(client)
        main = git(repo, "branch", "--show-current").strip()

        a.task = "find where the ADR folder is looked up"
        found = await a.call("files_search", {"pattern": r"doc/adr", "glob": "src/**"})
        assert "src/_adr_dir" in {m["path"] for m in found["matches"]}

        a.task = "read that script, and who wrote it"
        read = await a.call("files_read", {"path": "src/_adr_dir"})
        blame = await a.call("repo_blame", {"path": "src/_adr_dir"})
        assert blame["lines"] or blame, blame

        a.task = "start a branch"
        await a.call("repo_branch_create", {"name": "agent/adr-dir-env"})
        await a.call("repo_switch", {"branch": "agent/adr-dir-env"})

        a.task = "let ADR_DIR override the folder"
        await a.call("files_edit", {
            "path": "src/_adr_dir",
            "edits": [{"old": "reldir=.\n", "new": "reldir=.\n\nif [ -n \"$ADR_DIR\" ]\nthen\n\techo \"$ADR_DIR\"\n\texit\nfi\n"}],
            "expected_digest": read["digest"],
        })

        a.task = "add a test for it"
        await a.call("files_write", {"path": "tests/adr-dir-from-env.sh",
                                     "content": "#!/bin/bash\nset -e\nADR_DIR=elsewhere adr-config >/dev/null\n"})

        a.task = "record the decision as an ADR"
        await a.call("knowledge_create", {"kind": "adr", "front_matter": {"title": "Let ADR_DIR name the ADR folder", "status": "accepted"},
                                          "body": "## Context\n\nScripts need another folder.\n\n## Decision\n\nADR_DIR wins.\n\n## Consequences\n\nOne more variable.\n"})

        a.task = "tidy: move INSTALL.md, drop the Travis file"
        await a.call("files_move", {"from": "INSTALL.md", "to": "doc/INSTALL.md"})
        await a.call("files_delete", {"path": ".travis.yml"})

        a.task = "undo a stray edit"
        await a.call("files_edit", {"path": "README.md", "edits": [{"old": "ADR Tools\n=========", "new": "ADR Toolz\n========="}]})
        await a.call("repo_restore", {"paths": ["README.md"]})

        a.task = "check the change"
        diff = await a.call("repo_diff", {})
        assert "src/_adr_dir" in {f["path"] for f in diff["files"]}, diff["files"]
        await a.call("repo_status", {})

        a.task = "stage and commit on the branch"
        await a.call("repo_stage", {"paths": ["."]})
        commit = await a.call("repo_commit", {"message": "Let ADR_DIR name the ADR folder"})
        assert git(repo, "rev-parse", "HEAD").strip() == commit["commit"], commit

        a.task = "go back and read the branch's version"
        await a.call("repo_switch", {"branch": main})
        old = await a.call("files_read", {"path": "src/_adr_dir", "rev": "agent/adr-dir-env"})
        assert "ADR_DIR" in old["content"] and "ADR_DIR" not in (repo / "src/_adr_dir").read_text()

        return {"tasks": a.calls, "pending": a.pending, "answer_bytes": a.bytes}


def main() -> None:
    binary, repo = sys.argv[1], pathlib.Path(sys.argv[2])
    out = asyncio.run(session(binary, repo))
    audit = [json.loads(line) for line in (repo / ".seneschal/audit.jsonl").read_text().splitlines()]
    out["applied"] = [[r["capability"], r.get("approved_by")] for r in audit if r.get("outcome") == "applied"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
