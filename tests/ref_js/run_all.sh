#!/usr/bin/env bash
# Regenerate tests/expected/<name>.trace from every tests/ref_js/<name>.js
# (files starting with "_" are helpers, not scenarios).
#   ./run_all.sh           regenerate all traces
#   ./run_all.sh --check   regenerate into a temp dir and diff against tests/expected
# Needs Node.js and the npm package futoin-asyncsteps (installed here on demand).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
expected="$here/../expected"
cd "$here"

if [ ! -d node_modules/futoin-asyncsteps ]; then
    npm install --no-audit --no-fund >/dev/null
fi

out="$expected"
if [ "${1:-}" = "--check" ]; then
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

rc=0
for js in [!_]*.js; do
    name="${js%.js}"
    if ! node "$js" > "$out/$name.trace"; then
        echo "FAILED: $js" >&2
        rc=1
    fi
done

if [ "${1:-}" = "--check" ]; then
    for t in "$out"/*.trace; do
        if ! diff -u "$expected/$(basename "$t")" "$t"; then
            rc=1
        fi
    done
    [ $rc -eq 0 ] && echo "all traces match"
fi
exit $rc
