# Helpers the .ci/*.sh checks share; source it after setting `set -euo pipefail`.

passed=0
failed=0

# check NAME COMMAND...: runs one check and counts it passed or failed (never exits).
check() {
    local name=$1
    shift
    echo "== $name"
    if "$@"; then
        echo "ok: $name"
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

# pip_tools DIR PINS: a virtualenv at DIR/venv holding PINS, made anew when the pins change.
pip_tools() {
    local dir=$1 pins=$2
    if [ "$(cat "$dir/venv.pins" 2>/dev/null)" != "$pins" ]; then
        rm -rf "$dir/venv"
        python3 -m venv "$dir/venv"
        # shellcheck disable=SC2086
        "$dir/venv/bin/pip" install --quiet $pins
        echo "$pins" > "$dir/venv.pins"
    fi
}

# npm_tools DIR PINS: npm packages PINS under DIR/npm, installed anew when the pins change.
npm_tools() {
    local dir=$1 pins=$2
    if [ "$(cat "$dir/npm.pins" 2>/dev/null)" != "$pins" ]; then
        rm -rf "$dir/npm"
        # shellcheck disable=SC2086
        npm install --silent --no-audit --no-fund --prefix "$dir/npm" $pins
        echo "$pins" > "$dir/npm.pins"
    fi
}

# serve_in DIR BIN WORK [POLICY]: starts `BIN serve --bind 127.0.0.1:0 --approval POLICY`
# (default trust-client: a check that exercises the API, not its approval) in DIR with its stdin on a FIFO
# this shell holds (closing it at exit stops the server and removes WORK), and sets BASE to the
# address it prints. Exits when the server does not start.
serve_in() {
    local dir=$1 bin=$2 policy=${4:-trust-client}
    WORK=$3
    mkfifo "$WORK/stdin"
    # Every toolset: the checks reach every operation (the default surface is the first-contact
    # check's business).
    (cd "$dir" && exec "$bin" serve --bind 127.0.0.1:0 --approval "$policy" --toolsets all) < "$WORK/stdin" > "$WORK/stdout" 2> "$WORK/stderr" &
    SERVER=$!
    exec 3> "$WORK/stdin"
    trap stop_server EXIT
    for _ in $(seq 1 100); do
        grep -q '^listening on ' "$WORK/stdout" 2>/dev/null && break
        sleep 0.1
    done
    BASE=$(sed -n 's/^listening on //p' "$WORK/stdout")
    if [ -z "$BASE" ]; then
        echo "the server did not start:" >&2
        cat "$WORK/stderr" >&2
        exit 1
    fi
    echo "server at $BASE"
}

stop_server() {
    exec 3>&- || true
    wait "$SERVER" 2>/dev/null || true
    rm -rf "$WORK"
}
