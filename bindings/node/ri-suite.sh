#!/usr/bin/env bash
# The reference's own test suite against this binding (issue 21).
#
#   bash bindings/node/ri-suite.sh [--list]
#
# Installs futoin-asyncsteps@2.5.5 and what its tests need (mocha 10,
# chai 4: chai 5 is an ES module that Node 20's require() cannot load,
# performance-now) from npm into a cache folder (FUTOIN_RI_CACHE, default
# build/node-ri; installed once), then runs the package's bundled test
# files es5/test/*test.js UNMODIFIED twice with mocha:
#   1. against the reference itself (the control);
#   2. against this binding, through tests/ri/resolve.js, a hook on Node's
#      module resolution that maps the package's module names to ours.
# Prints "ri-suite (reference): P passed, F failed" and "ri-suite (futoin):
# P passed, F failed", then "ri-suite: K known failures (README.md), U
# unexpected, G listed but passing": each test of the reference's that
# fails here is listed in tests/ri/known-failures.txt and, with the
# reason, in README.md ("The reference's suite"). The status fails when
# the reference fails its own suite, a test not listed fails, or a listed
# one passes (the list must stay true). --list names every failing test.
# Environment: FUTOIN_ASYNC_NODE_ADDON (lib/native.js) to use another build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
list=
[ "${1:-}" = "--list" ] && list=--list
cache=${FUTOIN_RI_CACHE:-$repo/build/node-ri}
pkg=$cache/node_modules/futoin-asyncsteps
mkdir -p "$cache"
# npm trusts the system's CA bundle too (where a registry is reached through
# a TLS-inspecting proxy, its CA is in the system store, and Debian's npm
# does not read that store by itself: "self-signed certificate in chain").
if [ -z "${npm_config_cafile:-}" ] && [ -z "${NODE_EXTRA_CA_CERTS:-}" ] \
   && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
if [ ! -f "$pkg/package.json" ] || [ ! -x "$cache/node_modules/.bin/mocha" ]; then
  ( cd "$cache" && { [ -f package.json ] || echo '{"name":"futoin-ri-suite","private":true}' > package.json; } \
    && npm install --no-audit --no-fund --loglevel=error \
         futoin-asyncsteps@2.5.5 mocha@10 chai@4 performance-now@2 ) > "$cache/npm.log" 2>&1 || {
    echo "ri-suite: npm install failed (see $cache/npm.log)" >&2
    tail -5 "$cache/npm.log" >&2
    echo "ri-suite: 0 passed, 1 failed"
    exit 1
  }
fi
mocha=$cache/node_modules/.bin/mocha
tests=$(cd "$pkg" && ls es5/test/*test.js)
# The tests listed in tests/ri/timed.txt read counts in a timer at a
# wall-clock moment (75 to 450 ms) and compare them with what a sync
# object's 100 ms period let through: on a loaded machine they fail on the
# reference itself. They run apart (an assertion that fires late would be
# blamed on whatever test runs then) and do not decide the status; the
# same flows and counts run on virtual time in tests/ri_timed.test.js.
timed=$(sed -e '/^$/d' -e 's/[][\\.^$*+?(){}|/]/\\&/g' "$here/tests/ri/timed.txt" | paste -sd'|')
timed="^($timed)\$"
status=0
run() { # label report known gate [mocha args...]
  local label=$1 report=$2 known=$3 gate=$4; shift 4
  rm -f "$report"
  ( cd "$pkg" && NODE_PATH="$cache/node_modules" timeout 300 "$mocha" --exit --timeout 10000 \
      --reporter json --reporter-option "output=$report" "$@" $tests ) > "$report.log" 2>&1
  node "$here/tests/ri/count.js" "$report" "$label" "${list:---}" $known || [ "$gate" = 0 ] || status=1
}
run "ri-suite (reference)" "$cache/reference.json" "" 1 --grep "$timed" --invert
run "ri-suite (futoin)" "$cache/futoin.json" "$here/tests/ri/known-failures.txt" 1 \
  --grep "$timed" --invert --require "$here/tests/ri/resolve.js"
run "ri-suite wall-clock tests, not gating (reference)" "$cache/reference-timed.json" "" 0 \
  --grep "$timed"
run "ri-suite wall-clock tests, not gating (futoin)" "$cache/futoin-timed.json" "" 0 \
  --grep "$timed" --require "$here/tests/ri/resolve.js"
exit $status
