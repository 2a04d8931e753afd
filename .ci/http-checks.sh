#!/usr/bin/env bash
# Checks of the HTTP projection that need tools from outside cargo (issue 12).
#
#   .ci/http-checks.sh path/to/seneschal
#
# 1. generated/openapi.json passes openapi-spec-validator (PyPI) and `redocly lint` (npm) with
#    0 errors;
# 2. schemathesis (PyPI) run against the live server over the read-only (GET) operations
#    reports no failure;
# 3. headless Chromium (Debian `chromium`): /docs renders every operation of /openapi.json and
#    the cockpit at / renders every capability in its table (asserted on the DOM text);
#    screenshots are kept in $HTTP_CHECKS_ARTIFACTS (default target/http-checks/).
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
PY_PINS="openapi-spec-validator==0.9.0 schemathesis==4.32.5"
REDOCLY=@redocly/cli@2.77.0
mkdir -p "$CACHE" "$ART"
WORK=$(mktemp -d)

# --- tools -------------------------------------------------------------------------------------
pip_tools "$CACHE" "$PY_PINS"
npm_tools "$CACHE" "$REDOCLY"
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

# Every check but positive_data_acceptance: some schema-valid inputs are refused on purpose, with
# the documented 400 `invalid_input` (a `pattern` that is no regular expression, a `cursor` the
# server did not issue, a `kind` the repository does not declare); JSON Schema cannot say so.
check "schemathesis over the read-only operations" \
    "$CACHE/venv/bin/schemathesis" --config-file "$ROOT/.ci/schemathesis.toml" run "$BASE/openapi.json" \
    --include-method GET --checks all --exclude-checks positive_data_acceptance \
    --max-time "${SCHEMATHESIS_SECONDS:-30}" --warnings off --no-color

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
    chrome --dump-dom "$BASE/" > "$ART/cockpit.dom.html"
    chrome --screenshot="$ART/cockpit.png" "$BASE/" >/dev/null
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

check "chromium renders /docs from /openapi.json" docs_dom
check "chromium renders the cockpit's capability table" cockpit_dom

echo "artifacts: $ART"
echo "http-checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
