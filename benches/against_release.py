#!/usr/bin/env python3
"""What a change costs a write, against an earlier release: two seneschal binaries (OLD, NEW),
each resident over MCP stdio (`--approval trust-client`, as the peers section runs it) on its own
scratch clone of this repository, `tools/call` round trips timed in alternating order, paired
round by round (the ratio is the median of NEW / OLD per round).

    python3 benches/against_release.py OLD_BINARY NEW_BINARY [ROUNDS]

Both binaries are release builds; `scripts/bench.sh` builds the current one, an earlier one is
built from its tag or commit (`git worktree add`, `cargo build --release`)."""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite import Stdio, load  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def clone(into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--local", "--no-hardlinks", str(ROOT), str(into)], check=True)
    for k, v in (("user.name", "Bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", k, v], cwd=into, check=True)
    return into


def main() -> None:
    old_bin, new_bin = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    work = Path(tempfile.mkdtemp(prefix="seneschal-ab-"))
    env_home = work / "home"
    env_home.mkdir()
    (env_home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.invalid\n")
    os.environ["HOME"] = str(env_home)
    repos = {"old": clone(work / "old"), "new": clone(work / "new")}
    servers = {
        "old": Stdio([str(old_bin), "mcp", "--approval", "trust-client"], repos["old"]),
        "new": Stdio([str(new_bin), "mcp", "--approval", "trust-client"], repos["new"]),
    }
    print(f"load at the start: {load()}")
    try:
        for r in repos.values():
            (r / "bench").mkdir()
            (r / "bench" / "edit.txt").write_text("first line\nNothing here yet\nlast line\n")
        flip = {"old": False, "new": False}
        made = {"old": 0, "new": 0}

        def edit(side: str) -> float:
            flip[side] = not flip[side]
            old, new = ("Nothing here yet", "Nothing here") if flip[side] else ("Nothing here", "Nothing here yet")
            return servers[side].call("files_edit", {"path": "bench/edit.txt", "edits": [{"old": old, "new": new}]})

        def write(side: str) -> float:
            made[side] += 1
            return servers[side].call("files_write", {"path": f"bench/w{made[side]}.txt", "content": "a new file\n" * 20})

        def stage(side: str) -> float:
            made[side] += 1
            (repos[side] / "bench" / f"s{made[side]}.txt").write_text(f"stage {made[side]}\n")
            return servers[side].call("repo_stage", {"paths": [f"bench/s{made[side]}.txt"]})

        def commit(side: str) -> float:
            made[side] += 1
            f = repos[side] / "bench" / f"c{made[side]}.txt"
            f.write_text(f"commit {made[side]}\n")
            subprocess.run(["git", "add", str(f)], cwd=repos[side], check=True)
            return servers[side].call("repo_commit", {"message": f"bench {made[side]}"})

        print("| call | 0.5.0 (old) | this build (new) | new / old |")
        print("|---|---|---|---|")
        for name, fn in (("`files_edit` (one replacement)", edit), ("`files_write` (a new 220-byte file)", write),
                         ("`repo_stage` (one new file)", stage), ("`repo_commit` (one staged file)", commit)):
            for _ in range(3):
                fn("old"), fn("new")
            a, b = [], []
            for i in range(n):
                order = (("old", a), ("new", b)) if i % 2 == 0 else (("new", b), ("old", a))
                for side, out in order:
                    out.append(fn(side))
            ratio = statistics.median(y / x for x, y in zip(a, b))
            print(f"| {name} ({n} rounds) | {statistics.median(a):.2f} ms | {statistics.median(b):.2f} ms | {ratio:.2f} |")
        print(f"load at the end: {load()}")
    finally:
        for s in servers.values():
            s.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
