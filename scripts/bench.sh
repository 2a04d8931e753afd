#!/usr/bin/env bash
# seneschal's benchmark suite, one command: builds the release binary, runs benches/suite.py
# (MCP stdio, HTTP, build and generation, knowledge, files.search against rg, repo.diff against
# git diff) and rewrites
# docs/PERFORMANCE.md. Arguments go to the suite: --quick, --only mcp,http,build,growth,knowledge,files,diff,
# --no-write.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin seneschal
# Apart: built together, the example's dev-dependencies would change the binary's features and
# with them its symbol names, which share/link/mcp.order lists.
cargo build --release --example mcp_roundtrip
# The HTTP section's anchor: a tiny axum server, its own workspace and lockfile, built apart.
cargo build --release --manifest-path benches/axum-anchor/Cargo.toml --target-dir target/axum-anchor
# The idle-memory figure depends on the release link's function order; say when it is stale.
python3 scripts/link-order.py --check || echo "warning: the idle RSS figure will be higher until share/link/mcp.order is regenerated" >&2
exec python3 benches/suite.py "$@"
