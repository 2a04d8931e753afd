#!/usr/bin/env python3
"""The bytes an ordinary agent session costs: the calls of tests/python/agent_session.py (and a
blame of the script it edits), made over stdio against each binary given, on its own copy of
the adr-tools fixture; every answer's bytes (the line the server writes) summed, split into
the handshake, `tools/list` and the calls. Bytes, not time: a debug build answers the same
bytes as a release build.

    python3 benches/session_bytes.py BINARY [BINARY ...]

Standard library only. Each server runs `mcp --approval trust-client` with the default
toolsets (what an agent gets)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "agent-session" / "adr-tools"
# The calls a session makes (besides initialize and tools/list).
CALLS = 20


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, text=True, capture_output=True).stdout


class Server:
    def __init__(self, binary: str, repo: Path, env: dict):
        self.p = subprocess.Popen([binary, "mcp", "--approval", "trust-client"], cwd=repo, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.bytes: dict[str, int] = {}
        self.calls = 0

    def request(self, what: str, method: str, params: dict) -> dict:
        self.id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n"
        self.p.stdin.write(line.encode())
        self.p.stdin.flush()
        while True:
            raw = self.p.stdout.readline()
            msg = json.loads(raw)
            if msg.get("id") == self.id:
                self.bytes[what] = self.bytes.get(what, 0) + len(raw)
                return msg

    def call(self, tool: str, args: dict) -> dict:
        self.calls += 1
        msg = self.request("calls", "tools/call", {"name": tool, "arguments": args})
        result = msg["result"]
        assert not result.get("isError"), (tool, json.dumps(result)[:300])
        return result["structuredContent"]


def session(binary: str) -> dict[str, int]:
    work = Path(tempfile.mkdtemp(prefix="seneschal-bytes-"))
    try:
        repo, home = work / "adr-tools", work / "home"
        shutil.copytree(FIXTURE, repo, symlinks=True)
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = Ada Agent\n\temail = ada@example.invalid\n")
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
        fixture_env = {**env, "GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
                       "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid"}
        for args in (["init", "-q", "-b", "master"], ["add", "-A"], ["commit", "-q", "-m", "adr-tools at b3279ba"]):
            subprocess.run(["git", *args], cwd=repo, check=True, env=fixture_env, capture_output=True)
        s = Server(binary, repo, env)
        s.request("initialize", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "clientInfo": {"name": "bytes", "version": "0"}})
        s.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        s.p.stdin.flush()
        s.request("tools/list", "tools/list", {})
        s.call("files_search", {"pattern": r"doc/adr", "glob": "src/**"})
        read = s.call("files_read", {"path": "src/_adr_dir"})
        s.call("repo_blame", {"path": "src/_adr_dir"})
        s.call("files_find", {"pattern": "tests/*.sh"})
        s.call("repo_branch_create", {"name": "agent/adr-dir-env"})
        s.call("repo_switch", {"branch": "agent/adr-dir-env"})
        s.call("files_edit", {"path": "src/_adr_dir", "expected_digest": read["digest"], "edits": [
            {"old": "reldir=.\n", "new": "reldir=.\n\nif [ -n \"$ADR_DIR\" ]\nthen\n\techo \"$ADR_DIR\"\n\texit\nfi\n"}]})
        s.call("files_write", {"path": "tests/adr-dir-from-env.sh",
                               "content": "#!/bin/bash\nset -e\nADR_DIR=elsewhere adr-config >/dev/null\n"})
        s.call("repo_diff", {})
        s.call("repo_status", {})
        s.call("files_move", {"from": "INSTALL.md", "to": "doc/INSTALL.md"})
        s.call("files_delete", {"path": ".travis.yml"})
        s.call("files_edit", {"path": "README.md", "edits": [{"old": "ADR Tools\n=========", "new": "ADR Toolz\n========="}]})
        s.call("repo_restore", {"paths": ["README.md"]})
        s.call("repo_stage", {"paths": ["src/_adr_dir", "tests/adr-dir-from-env.sh", "INSTALL.md", "doc/INSTALL.md", ".travis.yml"]})
        s.call("repo_commit", {"message": "Let ADR_DIR name the ADR folder"})
        s.call("repo_log", {"limit": 1})
        s.call("repo_switch", {"branch": "master"})
        s.call("files_read", {"path": "src/_adr_dir", "rev": "agent/adr-dir-env"})
        s.call("knowledge_list", {"kind": "adr"})
        assert s.calls == CALLS, s.calls
        s.p.stdin.close()
        s.p.wait(timeout=30)
        return s.bytes
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    rows = [(b, session(b)) for b in sys.argv[1:]]
    print(f"{'binary':<40} {'initialize':>10} {'tools/list':>10} {f'{CALLS} calls':>9} {'total':>8}")
    for b, got in rows:
        total = sum(got.values())
        print(f"{b:<40} {got['initialize']:>10,} {got['tools/list']:>10,} {got['calls']:>9,} {total:>8,}")


if __name__ == "__main__":
    main()
