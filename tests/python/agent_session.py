#!/usr/bin/env python3
"""A scripted agent session: ordinary tasks in a repository nobody here wrote, through
`seneschal mcp` alone.

Usage: agent_session.py PATH/TO/seneschal FIXTURE_DIR

FIXTURE_DIR is tests/fixtures/agent-session/adr-tools (npryce/adr-tools, see SOURCE.md). It is
copied into a scratch folder and committed there as the user would have it; HOME points at a
folder whose .gitconfig holds the user's identity. Then the PyPI `mcp` SDK (2.x, the
2026-07-28 era: it probes `server/discover`), with an elicitation callback that approves what
it is shown (the person beside the agent), works through the tasks below, counting its calls
per server; every task is checked against plain git and the files on disk, and the audit log
is checked to hold one applied record per write. Exits 0 when every assertion holds and
prints the table of tasks and calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import mcp_types as types
from mcp import Client, StdioServerParameters


def git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, text=True, capture_output=True).stdout


class Agent:
    """The agent's side: each call is counted under the task it serves."""

    def __init__(self, client: Client):
        self.client = client
        self.calls: dict[str, int] = {}
        self.task = ""

    async def call(self, tool: str, args: dict) -> dict:
        self.calls[self.task] = self.calls.get(self.task, 0) + 1
        result = await self.client.call_tool(tool, args)
        assert result.is_error is False, (self.task, tool, args, result)
        return result.structured_content or {}


async def session(binary: str, repo: pathlib.Path, home: pathlib.Path) -> list[tuple[str, int]]:
    asked: list[str] = []

    async def approve(_context, params: types.ElicitRequestParams):
        # The person approves, and where the form offers it, approves the session's other
        # writes for its minutes (the `grant` field): one small change, one question.
        asked.append(params.message)
        schema = getattr(params, "requested_schema", None) or {}
        if "grant" in (schema.get("properties") or {}):
            return types.ElicitResult(action="accept", content={"grant": True})
        return types.ElicitResult(action="accept")

    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=str(repo), env=env)
    done: list[tuple[str, int]] = []
    async with Client(params, read_timeout_seconds=60, elicitation_callback=approve) as client:
        a = Agent(client)
        main = git(repo, "branch", "--show-current").strip()

        a.task = "find where the ADR folder is looked up"
        found = await a.call("files_search", {"pattern": r"doc/adr", "glob": "src/**"})
        files = {m["path"] for m in found["matches"]}
        assert "src/_adr_dir" in files, files

        a.task = "read that script"
        read = await a.call("files_read", {"path": "src/_adr_dir"})
        assert "while [ $(absdir $reldir) != / ]" in read["content"], read["content"][:200]

        a.task = "find every test script"
        tests = await a.call("files_find", {"pattern": "tests/*.sh"})
        assert len(tests["matches"]) >= 15, tests

        a.task = "start a branch for the change"
        await a.call("repo_branch_create", {"name": "agent/adr-dir-env"})
        await a.call("repo_switch", {"branch": "agent/adr-dir-env"})
        assert git(repo, "branch", "--show-current").strip() == "agent/adr-dir-env"

        a.task = "let ADR_DIR override the folder"
        edit = await a.call("files_edit", {
            "path": "src/_adr_dir",
            "edits": [{"old": "reldir=.\n", "new": "reldir=.\n\nif [ -n \"$ADR_DIR\" ]\nthen\n\techo \"$ADR_DIR\"\n\texit\nfi\n"}],
            "expected_digest": read["digest"],
        })
        assert "+\techo \"$ADR_DIR\"" in edit["diff"], edit["diff"]
        assert os.access(repo / "src/_adr_dir", os.X_OK), "the script stays executable"

        a.task = "add a test for it"
        test = "#!/bin/bash\nset -e\nADR_DIR=elsewhere adr-config >/dev/null\n"
        await a.call("files_write", {"path": "tests/adr-dir-from-env.sh", "content": test})

        a.task = "check the change"
        diff = await a.call("repo_diff", {})
        assert "src/_adr_dir" in {f["path"] for f in diff["files"]}, diff["files"]
        status = await a.call("repo_status", {})
        assert "tests/adr-dir-from-env.sh" in json.dumps(status), status

        a.task = "tidy: move INSTALL.md under doc/, drop the Travis file"
        await a.call("files_move", {"from": "INSTALL.md", "to": "doc/INSTALL.md"})
        await a.call("files_delete", {"path": ".travis.yml"})
        assert (repo / "doc/INSTALL.md").is_file() and not (repo / "INSTALL.md").exists()

        a.task = "undo a stray edit"
        readme = (repo / "README.md").read_bytes()
        await a.call("files_edit", {"path": "README.md", "edits": [{"old": "ADR Tools\n=========", "new": "ADR Toolz\n========="}]})
        await a.call("repo_restore", {"paths": ["README.md"]})
        assert (repo / "README.md").read_bytes() == readme

        a.task = "commit on the branch"
        await a.call("repo_stage", {"paths": ["src/_adr_dir", "tests/adr-dir-from-env.sh", "INSTALL.md", "doc/INSTALL.md", ".travis.yml"]})
        commit = await a.call("repo_commit", {"message": "Let ADR_DIR name the ADR folder"})
        assert git(repo, "rev-parse", "HEAD").strip() == commit["commit"], commit
        # Clean: seneschal's state folder never shows (its .gitignore ignores all of it, itself too).
        assert git(repo, "status", "--porcelain") == "", git(repo, "status", "--porcelain")
        log = await a.call("repo_log", {"limit": 1})
        assert log["commits"][0]["subject"] == "Let ADR_DIR name the ADR folder", log
        author = git(repo, "log", "-1", "--format=%an <%ae>").strip()
        assert author == "Ada Agent <ada@example.invalid>", author

        a.task = "go back and compare with the branch"
        await a.call("repo_switch", {"branch": main})
        assert git(repo, "branch", "--show-current").strip() == main
        assert (repo / "INSTALL.md").is_file() and not (repo / "doc/INSTALL.md").exists()
        old = await a.call("files_read", {"path": "src/_adr_dir", "rev": "agent/adr-dir-env"})
        assert "ADR_DIR" in old["content"] and "ADR_DIR" not in (repo / "src/_adr_dir").read_text()

        a.task = "read the project's decisions"
        adrs = await a.call("knowledge_list", {"kind": "adr"})
        assert len(adrs["objects"]) == 9, [o["id"] for o in adrs["objects"]]

        done = list(a.calls.items())
    audit = [json.loads(line) for line in (repo / ".seneschal/audit.jsonl").read_text().splitlines()]
    applied = [r["capability"] for r in audit if r.get("outcome") == "applied"]
    writes = ["repo.branch.create", "repo.switch", "files.edit", "files.write", "files.move", "files.delete",
              "files.edit", "repo.restore", "repo.stage", "repo.commit", "repo.switch"]
    assert applied == writes, applied
    # The read consent and the first write (with its grant): at most 4 questions for the session.
    assert 1 <= len(asked) <= 4, asked
    print(f"the person was asked {len(asked)} time(s) for {len(writes)} writes")
    return done


async def main() -> None:
    binary, fixture = sys.argv[1], pathlib.Path(sys.argv[2])
    work = pathlib.Path(tempfile.mkdtemp(prefix="seneschal-agent-"))
    repo, home = work / "adr-tools", work / "home"
    shutil.copytree(fixture, repo, symlinks=True)
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada Agent\n\temail = ada@example.invalid\n")
    env = {"GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
           "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid"}
    os.environ.update(env)
    git(repo, "init", "-q", "-b", "master")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adr-tools at b3279ba")
    for k in env:
        del os.environ[k]
    try:
        rows = await session(binary, repo, home)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'task':<58} calls  server")
    for task, n in rows:
        print(f"{task:<58} {n:>5}  seneschal")
    print(f"ok agent session: {len(rows)} tasks, {sum(n for _, n in rows)} calls, every one to seneschal")


if __name__ == "__main__":
    asyncio.run(main())
