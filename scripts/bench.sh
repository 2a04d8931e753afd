#!/usr/bin/env bash
# seneschal's benchmark suite, one command: builds the release binary, runs benches/suite.py
# (MCP stdio, memory at rest against rmcp, HTTP, build and generation, knowledge, files.search
# against rg, repo.diff against git diff, the git readers, the two reference servers, staging
# at scale against git add) and rewrites docs/PERFORMANCE.md. Arguments go to the suite:
# --quick, --only mcp,memory,http,build,growth,knowledge,files,diff,git,peers,stage, --no-write.
# The diff and git sections also build benches/floor/floor.rs: the transport floor of a git
# reader's answer (git and an answer of the same size, nothing else).
# Builds go to $CARGO_TARGET_DIR when set (else ./target), and the suite reads them there.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
only=all
prev=
for a in "$@"; do
  case "$a" in --only=*) only="${a#--only=}" ;; esac
  [ "$prev" = --only ] && only="$a"
  prev="$a"
done
wants() { [ "$only" = all ] || [[ ",$only," == *",$1,"* ]]; }
cargo build --release --bin seneschal
# Apart: built together, the example's dev-dependencies would change the binary's features.
if wants mcp || wants memory; then cargo build --release --example mcp_roundtrip; fi
# The anchors, each its own workspace and lockfile, built apart: a tiny axum server for the
# HTTP section, rmcp's echo server over stdio for the memory section.
if wants http; then
  cargo build --release --manifest-path benches/axum-anchor/Cargo.toml --target-dir target/axum-anchor
fi
if wants memory; then
  cargo build --release --manifest-path benches/rmcp-anchor/Cargo.toml --target-dir target/rmcp-anchor
fi
# The transport floor of the git readers (benches/floor/floor.rs): one file, no dependencies.
if wants diff || wants git; then
  mkdir -p "$target/floor"
  rustc -O --edition 2021 benches/floor/floor.rs -o "$target/floor/floor"
fi
# The reference servers of the "Reference servers" section, installed once under $target/peers.
peers="$target/peers"
if wants peers && [ ! -x "$peers/venv/bin/mcp-server-git" ]; then
  python3 -m venv "$peers/venv" && "$peers/venv/bin/pip" install -q mcp-server-git
fi
if wants peers && [ ! -x "$peers/node_modules/.bin/mcp-server-filesystem" ]; then
  npm install --silent --prefix "$peers" @modelcontextprotocol/server-filesystem
fi
exec python3 benches/suite.py "$@"
