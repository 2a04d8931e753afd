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
