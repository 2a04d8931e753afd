#!/usr/bin/env python3
"""Regenerates share/link/mcp.order: the functions `seneschal mcp` runs, in the order the
release link places them first in .text (see codegen/src/link.rs and docs/bench/rss.md).

Runs the release binary under valgrind's callgrind twice: once for start-up and
`initialize` (listed first: these pages stay resident while the server idles), once for a
session of ordinary requests (listed next). Names are the mangled symbols of the binary, so
regenerate after a toolchain, dependency or version change; a stale name only loses its
place (the link ignores names it does not find).

Usage: cargo build --release && scripts/link-order.py [BINARY]
       scripts/link-order.py --check [BINARY]   # how many listed names the binary still has;
                                                # exit 1 below 90 % (regenerate then)
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECK = "--check" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--check"]
BIN = pathlib.Path(ARGS[0] if ARGS else ROOT / "target/release/seneschal").resolve()
OUT = ROOT / "share/link/mcp.order"

INIT = (
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"clientInfo":{"name":"order","version":"0"}}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)
REQUESTS = INIT + "".join(
    line + "\n"
    for line in [
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"server_status","arguments":{}}}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"capabilities_show",'
        '"arguments":{"id":"capabilities.list"}}}',
        '{"jsonrpc":"2.0","id":5,"method":"resources/list"}',
        '{"jsonrpc":"2.0","id":6,"method":"nope"}',
        "not json",
    ]
)


def functions(session: str) -> list[str]:
    """The binary's own functions that `seneschal mcp` runs for `session`, in first-seen order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", str(BIN), "mcp"],
            input=session.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=True,
        )
        names: dict[str, str] = {}
        objects: dict[str, str] = {}
        current = ""
        seen: dict[str, None] = {}
        for line in out.read_text().splitlines():
            m = re.match(r"^(fn|ob|cfn|cob)=\((\d+)\)(?: (.*))?$", line)
            if not m:
                continue
            kind, ident, name = m.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[ident] = name
            if kind == "ob":
                current = objects[ident]
            elif kind == "fn" and pathlib.Path(current) == BIN:
                # Callgrind marks recursion depth with a `'N` suffix.
                fn = re.sub(r"'\d+$", "", names[ident])
                if not fn.startswith("0x") and not fn.startswith("("):
                    seen.setdefault(fn)
        return list(seen)


def check() -> None:
    """Says how many names of the order file the binary defines; a version bump, a dependency
    or a toolchain change renames the mangled symbols, and the link then ignores them."""
    listed = OUT.read_text().split()
    nm = subprocess.run(["nm", "--defined-only", str(BIN)], capture_output=True, text=True, check=True)
    defined = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    found = sum(1 for name in listed if name in defined)
    share = found / len(listed) if listed else 0.0
    print(f"{OUT.relative_to(ROOT)}: {found} of {len(listed)} names are in {BIN.name} ({share:.0%})")
    if share < 0.9:
        print("stale: regenerate with `cargo build --release && scripts/link-order.py && cargo build --release`")
        sys.exit(1)


def main() -> None:
    if CHECK:
        check()
        return
    # The C runtime's entry and its constructors run before callgrind's first named function.
    crt = ["_start", "frame_dummy", "register_tm_clones", "deregister_tm_clones", "__do_global_dtors_aux"]
    first = crt + [f for f in functions(INIT) if f not in crt]
    rest = [f for f in functions(REQUESTS) if f not in set(first)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(f + "\n" for f in first + rest))
    print(f"{OUT.relative_to(ROOT)}: {len(first)} start-up + {len(rest)} request functions")


if __name__ == "__main__":
    main()
