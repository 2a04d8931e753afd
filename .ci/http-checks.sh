#!/usr/bin/env bash
# Checks of the HTTP projection that need tools from outside cargo (issue 12).
#
#   .ci/http-checks.sh path/to/seneschal
#
# 1. generated/openapi.json passes openapi-spec-validator (PyPI) and `redocly lint` (npm) with
#    0 errors;
# 2. schemathesis (PyPI), every check but the one .ci/schemathesis.toml documents, run over
#    every operation (reads and writes) against a live `serve --approval trust-client` in a
#    throwaway copy of a real repository (tests/fixtures/agent-session/adr-tools), where its
#    writes land harmlessly, reports no failure;
# 3. headless Chromium (Debian `chromium`): /docs renders every operation of /openapi.json,
#    the cockpit at / renders every capability in its table, and, in a scratch repository
#    written twice, its activity feed shows both writes with their diffs (asserted on the DOM);
#    and its approval desk (driven by playwright-core) shows an MCP stdio agent's pending write
#    with its diff and approves it with a click; screenshots are kept in
#    $HTTP_CHECKS_ARTIFACTS (default target/http-checks/).
#
# Tools are installed once into $HTTP_CHECKS_CACHE (default ~/.cache/seneschal-http-checks) at
# pinned versions. The server runs with stdin on a FIFO this script holds: closing it stops the
# server, so nothing outlives the script. Exits non-zero when any check fails.
set -euo pipefail
# shellcheck source=.ci/lib.sh
source "$(dirname "$0")/lib.sh"

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 path/to/seneschal (the built binary)" >&2
    exit 2
fi
BIN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HTTP_CHECKS_CACHE:-$HOME/.cache/seneschal-http-checks}
ART=${HTTP_CHECKS_ARTIFACTS:-$ROOT/target/http-checks}
PY_PINS="openapi-spec-validator==0.9.0 schemathesis==4.32.5 mcp==2.3.0"
REDOCLY=@redocly/cli@2.77.0
mkdir -p "$CACHE" "$ART"
WORK=$(mktemp -d)

# --- tools -------------------------------------------------------------------------------------
pip_tools "$CACHE" "$PY_PINS"
npm_tools "$CACHE" "$REDOCLY playwright-core@1.64.1"
if ! command -v chromium >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
PY="$CACHE/venv/bin/python"

# --- the committed OpenAPI document --------------------------------------------------------------
check "openapi-spec-validator generated/openapi.json" \
    "$CACHE/venv/bin/openapi-spec-validator" "$ROOT/generated/openapi.json"
check "redocly lint generated/openapi.json (0 errors)" \
    "$CACHE/npm/node_modules/.bin/redocly" lint --format=summary "$ROOT/generated/openapi.json"

# --- the live server -----------------------------------------------------------------------------
serve_in "$ROOT" "$BIN" "$WORK"

# Every operation, reads and writes, with every check but positive_data_acceptance (why: see
# .ci/schemathesis.toml), against a server of its own in a throwaway repository: under
# --approval trust-client nothing is asked, so the writes run, and land in that copy.
schemathesis_all() {
    local repo="$WORK/fuzzed" base pid rc=0
    cp -R "$ROOT/tests/fixtures/agent-session/adr-tools" "$repo"
    git -C "$repo" init -q -b main
    git -C "$repo" config user.name CI
    git -C "$repo" config user.email ci@example.invalid
    git -C "$repo" add -A
    git -C "$repo" commit -q -m "initial"
    mkfifo "$WORK/fuzzed.stdin"
    (cd "$repo" && exec "$BIN" serve --bind 127.0.0.1:0 --approval trust-client) \
        < "$WORK/fuzzed.stdin" > "$WORK/fuzzed.stdout" 2>/dev/null &
    pid=$!
    exec 6> "$WORK/fuzzed.stdin"
    for _ in $(seq 1 100); do grep -q '^listening on ' "$WORK/fuzzed.stdout" 2>/dev/null && break; sleep 0.1; done
    base=$(sed -n 's/^listening on //p' "$WORK/fuzzed.stdout")
    "$CACHE/venv/bin/schemathesis" --config-file "$ROOT/.ci/schemathesis.toml" run "$base/openapi.json" \
        --checks all --exclude-checks positive_data_acceptance \
        --max-time "${SCHEMATHESIS_SECONDS:-120}" --warnings off --no-color || rc=1
    exec 6>&-
    wait "$pid" 2>/dev/null || true
    return "$rc"
}
check "schemathesis over every operation (writes in a throwaway repository)" schemathesis_all

chrome() {
    local profile
    profile=$(mktemp -d)
    timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --user-data-dir="$profile" \
        --virtual-time-budget=15000 --window-size=1280,1400 "$@" 2>/dev/null
    rm -rf "$profile"
}

docs_dom() {
    chrome --dump-dom "$BASE/docs" > "$ART/docs.dom.html"
    chrome --screenshot="$ART/docs.png" "$BASE/docs" >/dev/null
    "$PY" - "$ROOT/generated/openapi.json" "$ART/docs.dom.html" <<'EOF'
import html, json, re, sys
spec = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
shown = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', dom))
text = html.unescape(re.sub(r"<[^>]+>", " ", dom))
missing = []
for path, ops in spec["paths"].items():
    for method, op in ops.items():
        if path not in shown or op["operationId"] not in text or op["summary"] not in text:
            missing.append(f"{method.upper()} {path} ({op['operationId']})")
if missing:
    sys.exit("Swagger UI does not show: " + ", ".join(missing))
print(f"Swagger UI shows all {sum(len(o) for o in spec['paths'].values())} operations")
EOF
}

cockpit_dom() {
    chrome --dump-dom "$BASE/capabilities" > "$ART/cockpit.dom.html"
    chrome --screenshot="$ART/cockpit.png" "$BASE/capabilities" >/dev/null
    curl -fsS "$BASE/api/v1/capabilities/projections" > "$WORK/projections.json"
    "$PY" - "$WORK/projections.json" "$ART/cockpit.dom.html" <<'EOF'
import html, json, re, sys
caps = json.load(open(sys.argv[1]))["capabilities"]
dom = open(sys.argv[2]).read()
table = dom[dom.index('id="capabilities"'):]
table = table[:table.index("</table>")]
rows = [html.unescape(re.sub(r"<[^>]+>", "|", r)) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
problems = []
for c in caps:
    row = next((r for r in rows if f"|{c['id']}|" in r), None)
    if row is None:
        problems.append(f"{c['id']}: no row")
    elif f"|{c['effect']}|" not in row or f"|{c['approval']}|" not in row:
        problems.append(f"{c['id']}: effect or approval missing in {row!r}")
    elif c.get("http") and c["http"] not in row:
        problems.append(f"{c['id']}: route {c['http']} missing")
err = re.search(r'id="error">([^<]*)<', dom)
if err and err.group(1).strip():
    problems.append("the page reports: " + err.group(1))
if problems:
    sys.exit("cockpit: " + "; ".join(problems))
print(f"the cockpit shows all {len(caps)} capabilities with effect, approval and route")
EOF
}

# The activity feed, in a scratch repository of its own: two writes through the command line
# (a new file, then an edit of it), then a `serve` there whose cockpit must show both, newest
# first, with the edit's diff lines.
activity_dom() {
    local repo="$WORK/activity" base pid
    mkdir -p "$repo" && git -C "$repo" init -q
    (cd "$repo" && "$BIN" call files.write --yes --input '{"path": "notes/plan.md", "content": "# Plan\n\nShip it.\n"}' >/dev/null)
    (cd "$repo" && "$BIN" call files.edit --yes --input '{"path": "notes/plan.md", "edits": [{"old": "Ship it.", "new": "Ship it on Friday."}]}' >/dev/null)
    mkfifo "$WORK/activity.stdin"
    (cd "$repo" && exec "$BIN" serve --bind 127.0.0.1:0) < "$WORK/activity.stdin" > "$WORK/activity.stdout" 2>/dev/null &
    pid=$!
    exec 4> "$WORK/activity.stdin"
    for _ in $(seq 1 100); do grep -q '^listening on ' "$WORK/activity.stdout" 2>/dev/null && break; sleep 0.1; done
    base=$(sed -n 's/^listening on //p' "$WORK/activity.stdout")
    chrome --dump-dom "$base/" > "$ART/activity.dom.html"
    chrome --screenshot="$ART/activity.png" "$base/" >/dev/null
    exec 4>&-
    wait "$pid" 2>/dev/null || true
    "$PY" - "$ART/activity.dom.html" <<'EOF'
import html, re, sys
dom = open(sys.argv[1]).read()
feed = dom[dom.index('id="activity"'):]
feed = feed[:feed.index("</ol>")]
items = [html.unescape(re.sub(r"<[^>]+>", "", i)) for i in re.findall(r"<li[^>]*>(.*?)</li>", feed, re.S)]
assert len(items) == 2, items
assert items[0].startswith("files.edit applied") and items[1].startswith("files.write applied"), items
assert "-Ship it." in items[0] and "+Ship it on Friday." in items[0], items[0]
assert "notes/plan.md" in items[1] and "+# Plan" in items[1], items[1]
print("the cockpit's activity feed shows both writes, newest first, with their diffs")
EOF
}

check "chromium renders /docs from /openapi.json" docs_dom
check "chromium renders the cockpit's capability table (/capabilities)" cockpit_dom
check "chromium renders the cockpit's activity feed" activity_dom

# The approval desk, in a scratch repository of its own: an agent on MCP stdio (a client that
# cannot be asked) asks for a write under `--approval ask`; the cockpit of a `serve` of the same
# repository, opened from the link with the desk secret, shows it and approves it with a click
# (playwright-core driving Chromium); the agent's call then answers success and the file exists.
desk_dom() {
    local repo="$WORK/desk" base pid secret agent rc=0
    secret="desk-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    mkdir -p "$repo" && git -C "$repo" init -q
    mkfifo "$WORK/desk.stdin"
    (cd "$repo" && SENESCHAL_DESK_SECRET="$secret" exec "$BIN" serve --bind 127.0.0.1:0 --approval ask) \
        < "$WORK/desk.stdin" > "$WORK/desk.stdout" 2>/dev/null &
    pid=$!
    exec 5> "$WORK/desk.stdin"
    for _ in $(seq 1 100); do grep -q '^listening on ' "$WORK/desk.stdout" 2>/dev/null && break; sleep 0.1; done
    base=$(sed -n 's/^listening on //p' "$WORK/desk.stdout")
    "$PY" "$ROOT/.ci/http-checks/desk-agent.py" "$BIN" "$repo" > "$WORK/desk.agent" &
    agent=$!
    # Beside its node_modules, so that the module resolves playwright-core.
    cp "$ROOT/.ci/http-checks/desk.mjs" "$CACHE/npm/desk.mjs"
    node "$CACHE/npm/desk.mjs" "$base" "$secret" "$ART/desk.png" || rc=1
    wait "$agent" || rc=1
    exec 5>&-
    wait "$pid" 2>/dev/null || true
    [ "$rc" -eq 0 ] || return 1
    "$PY" -c '
import json, os, sys
approved, declined = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert approved["result"]["isError"] is False, approved
assert open(sys.argv[2] + "/notes/desk.md").read().endswith("Approved in a browser.\n")
assert declined["result"]["_meta"]["seneschal/error"]["code"] == "not_approved", declined
assert not os.path.exists(sys.argv[2] + "/notes/declined.md")
print("the write approved in the cockpit was applied; the declined one was not")
' "$WORK/desk.agent" "$repo"
}
check "chromium: the cockpit's desk approves an agent's pending write" desk_dom

# The scripted desk session (issue 36): an agent on MCP stdio through the PyPI `mcp` SDK with
# its defaults (no elicitation, so it cannot ask; it makes a call again when told its approval
# is pending) works through ordinary tasks in a copy of npryce/adr-tools (find, read, blame,
# branch, edit, write, record an ADR, move, delete, restore, diff, status, stage, commit, switch,
# read at a revision), while the person decides every question by clicks in the cockpit in
# Chromium. Asserted: at most 4 questions; every first pending answer came at once (well
# within any client's request timeout) and names its approval; every write applied, approved
# at the cockpit or by the grant given there. Printed: questions, calls, bytes of the answers.
session_dom() {
    local repo="$WORK/session/adr-tools" base pid secret rc=0
    secret="desk-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    mkdir -p "$WORK/session"
    cp -R "$ROOT/tests/fixtures/agent-session/adr-tools" "$repo"
    (cd "$repo" && git init -q -b master && git add -A \
        && git -c user.name=Fixture -c user.email=fixture@example.invalid commit -q -m "adr-tools at b3279ba")
    git -C "$repo" config user.name "Ada Agent"
    git -C "$repo" config user.email "ada@example.invalid"
    mkfifo "$WORK/session.stdin"
    (cd "$repo" && SENESCHAL_DESK_SECRET="$secret" exec "$BIN" serve --bind 127.0.0.1:0 --approval ask) \
        < "$WORK/session.stdin" > "$WORK/session.stdout" 2>/dev/null &
    pid=$!
    exec 6> "$WORK/session.stdin"
    for _ in $(seq 1 100); do grep -q '^listening on ' "$WORK/session.stdout" 2>/dev/null && break; sleep 0.1; done
    base=$(sed -n 's/^listening on //p' "$WORK/session.stdout")
    cp "$ROOT/.ci/http-checks/person.mjs" "$CACHE/npm/person.mjs"
    node "$CACHE/npm/person.mjs" "$base" "$secret" "$ART" "$WORK/session.done" > "$WORK/session.person" &
    local person=$!
    "$PY" "$ROOT/.ci/http-checks/session-agent.py" "$BIN" "$repo" > "$WORK/session.agent" || rc=1
    touch "$WORK/session.done"
    wait "$person" || rc=1
    exec 6>&-
    wait "$pid" 2>/dev/null || true
    [ "$rc" -eq 0 ] || return 1
    "$PY" - "$WORK/session.agent" "$WORK/session.person" <<'PY'
import json, sys
agent = json.load(open(sys.argv[1]))
person = json.load(open(sys.argv[2]))
calls = sum(agent["tasks"].values())
first = {}
for p in agent["pending"]:
    first.setdefault(p["desk"], p["seconds"])
slowest = max(first.values(), default=0)
print(f"{len(agent['tasks'])} tasks, {calls} calls, {person['questions']} question(s) to the person "
      f"({', '.join(person['asked'])}), {agent['answer_bytes']:,} bytes of answers; "
      f"the slowest first pending answer took {slowest:.2f} s")
for task, n in agent["tasks"].items():
    print(f"  {task:<50} {n} call(s)")
assert person["questions"] <= 4, person
assert len(first) == person["questions"], (agent["pending"], person)
assert slowest < 10, agent["pending"]
by = {b for _, b in agent["applied"]}
assert by <= {"cockpit", "grant"} and "grant" in by, agent["applied"]
assert len(agent["applied"]) >= 12, agent["applied"]
print("the session's writes were decided in the cockpit, by clicks, in at most 4 questions")
PY
}
check "chromium: a scripted agent session decided on the cockpit's desk in at most 4 questions" session_dom

echo "artifacts: $ART"
echo "http-checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
