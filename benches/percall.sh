#!/usr/bin/env bash
# Instructions per MCP stdio request, counted by callgrind on the release binary, for
# `tools/call server_status`, `tools/call capabilities_show` ({"id":"server.status"}) and
# `tools/list`. Two figures each:
#   per call   (initialize + 1 + N requests) - (initialize + 1 request), / N: the steady cost
#              of one more request (the first one's one-time work, such as compiling the
#              tool's schemas, is in both runs);
#   with first (initialize + N requests) - (initialize alone), / N: the same with the first
#              request's one-time work spread over the N.
#
#   benches/percall.sh [N]          (N = 200 by default; the binary: $SENESCHAL_BIN or
#                                    $CARGO_TARGET_DIR/release/seneschal or target/release/seneschal)
#   KEEP=dir benches/percall.sh     keeps the callgrind files in dir, for callgrind_annotate
#   CLIENT_CAPS='{"elicitation":{}}' benches/percall.sh
#                                   the client declares these capabilities in `initialize`
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
BIN=${SENESCHAL_BIN:-${CARGO_TARGET_DIR:-target}/release/seneschal}
[ -x "$BIN" ] || { echo "no release binary at $BIN (cargo build --release)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
OUT=${KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$OUT"' EXIT

CAPS=${CLIENT_CAPS:-"{}"}
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":'"$CAPS"',"clientInfo":{"name":"bench","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}'

# The instructions of one run of the server on the input $2, its callgrind file named $1.
count() {
  local file="$OUT/callgrind.$1"
  printf '%s\n' "$2" | valgrind --tool=callgrind --callgrind-out-file="$file" "$BIN" mcp \
    >"$OUT/$1.out" 2>"$OUT/$1.err"
  local answers
  answers=$(wc -l <"$OUT/$1.out")
  awk '/^(summary|totals):/ {print $2; exit}' "$file"
  echo "$answers" >"$OUT/$1.answers"
}

# Input: initialize, then $2 copies of the request $1 (ids 1..$2).
requests() {
  local i
  printf '%s\n' "$INIT"
  for ((i = 1; i <= $2; i++)); do
    printf '{"jsonrpc":"2.0","id":%d,%s}\n' "$i" "$1"
  done
}

# Every answer of a run: one per request, none an error.
check() {
  local answers
  answers=$(cat "$OUT/$1.answers")
  if [ "$answers" -ne $(($2 + 1)) ]; then
    echo "$1: $answers answers for $(($2 + 1)) requests" >&2
    exit 1
  fi
  if grep -q '"isError":true\|"error":' "$OUT/$1.out"; then
    echo "$1: an answer is an error: $(grep -m1 '"error"\|"isError":true' "$OUT/$1.out")" >&2
    exit 1
  fi
}

base=$(count base "$INIT")
printf 'initialize alone: %d instructions; N = %d\n' "$base" "$N"
printf '%-20s %12s %12s\n' request 'per call' 'with first'
while IFS='|' read -r label body; do
  one=$(count "$label.1" "$(requests "$body" 1)")
  check "$label.1" 1
  n=$(count "$label.n" "$(requests "$body" "$N")")
  check "$label.n" "$N"
  n1=$(count "$label.n1" "$(requests "$body" $((N + 1)))")
  check "$label.n1" $((N + 1))
  printf '%-20s %12d %12d\n' "$label" $(((n1 - one) / N)) $(((n - base) / N))
done <<'LIST'
server_status|"method":"tools/call","params":{"name":"server_status","arguments":{}}
capabilities_show|"method":"tools/call","params":{"name":"capabilities_show","arguments":{"id":"server.status"}}
tools_list|"method":"tools/list"
LIST
