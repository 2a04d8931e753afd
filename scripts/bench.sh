#!/usr/bin/env bash
# seneschal's benchmark suite, one command: builds the release binary, runs benches/suite.py
# (MCP stdio, HTTP, build and generation, knowledge, files.search against rg) and rewrites
# docs/PERFORMANCE.md. Arguments go to the suite: --quick, --only mcp,http,build,growth,knowledge,files,
# --no-write.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin seneschal
exec python3 benches/suite.py "$@"
