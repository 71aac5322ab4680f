#!/usr/bin/env bash
# The Node.js side of the polyglot matrix (tests/polyglot/README.md).
#
#   bash bindings/node/polyglot.sh build OUTDIR
#       Builds the addon (build/bindings/node/futoin_async.node, the meson
#       build of the checkout or $FUTOIN_POLYGLOT_BUILD). Node.js is a host
#       program only: no plug-in libfutoin_host_javascript.so exists (Node
#       cannot be started inside another host program here, README.md
#       "JavaScript steps in other hosts"), so nothing else is built. Prints
#       the environment, one KEY=VALUE a line:
#         NODE_PATH    tests/polyglot/fragments/javascript (the JavaScript
#                      fragments, for steps of JavaScript by name in flows
#                      of a Node host program)
#   bash bindings/node/polyglot.sh test
#       The Node host's matrix (tests/polyglot/host_matrix.js, node --test
#       with --expose-gc): JavaScript steps with steps of C, Python, Lua,
#       Java and JavaScript itself (by name) in one flow. Uses
#       FUTOIN_POLYGLOT_C_FRAGMENTS, PYTHONPATH, LUA_PATH, LUA_CPATH,
#       CLASSPATH, FUTOIN_JAVA_CLASSPATH as tests/polyglot/run.sh exports
#       them; run alone, it builds the other languages' hosts and the C
#       fragments into a temporary folder first (tests/polyglot/hosts.sh).
#       FUTOIN_POLYGLOT_LANGS picks the fragment languages (default
#       "c python lua java javascript"), FUTOIN_POLYGLOT_FLOWS the mixed
#       flows per language (default 10000). Last line:
#         polyglot-node: N passed, M failed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${FUTOIN_POLYGLOT_BUILD:-$repo/build}
export LC_ALL=C.UTF-8

build_addon() {
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$repo" >&2 || return 1
  fi
  ninja -C "$build" -j2 bindings/node/futoin_async.node >&2
}

run_test() {
  local tmp="" log rc sum passed failed
  build_addon >/dev/null 2>&1 || { echo "the addon does not build"; echo "polyglot-node: 0 passed, 1 failed"; return 1; }
  if [ -z "${FUTOIN_POLYGLOT_C_FRAGMENTS:-}" ]; then
    # alone: build what tests/polyglot/run.sh would have built
    tmp=$(mktemp -d /tmp/futoin-node-polyglot.XXXXXX)
    trap "rm -rf '$tmp'" EXIT
    ninja -C "$build" -j2 tests/libpolyglot_fragments.so >/dev/null || {
      echo "polyglot-node: 0 passed, 1 failed"; return 1; }
    export FUTOIN_POLYGLOT_C_FRAGMENTS=$build/tests/libpolyglot_fragments.so
    export XDG_CACHE_HOME=$tmp/cache
    (cd "$repo" && . tests/polyglot/hosts.sh && futoin_polyglot_hosts "$tmp" python lua java \
       && env | grep -E '^(PYTHONPATH|LUA_PATH|LUA_CPATH|CLASSPATH|FUTOIN_[A-Z_]+)=') >"$tmp/env" \
      || echo "(some hosts did not build: their cells fail)"
    local line
    while IFS= read -r line; do export "${line?}"; done <"$tmp/env"
  fi
  export NODE_PATH="$repo/tests/polyglot/fragments/javascript${NODE_PATH:+:$NODE_PATH}"
  # the addon of the build the matrix runs on (lib/native.js of a checkout
  # would load build/'s, whichever build this is)
  export FUTOIN_ASYNC_NODE_ADDON=${FUTOIN_ASYNC_NODE_ADDON:-$build/bindings/node/futoin_async.node}
  log=$(mktemp /tmp/futoin-node-polyglot-log.XXXXXX)
  (cd "$here" && node --expose-gc --test --test-reporter=tap tests/polyglot/host_matrix.js) >"$log" 2>&1
  rc=$?
  grep -E '^(not ok|# (pass|fail)|# +Node host x .* flows)' "$log"
  grep -q '^not ok' "$log" && grep -vE '^\s*(ok|#)' "$log" | head -80
  passed=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
  passed=${passed:-0}; failed=${failed:-1}
  if [ $rc -ne 0 ] && [ "$failed" = 0 ]; then failed=1; fi
  rm -f "$log"
  echo "polyglot-node: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}

case "${1:-}" in
build)
  [ -n "${2:-}" ] || { echo "usage: $0 build OUTDIR" >&2; exit 2; }
  build_addon || exit 1
  echo "NODE_PATH=$repo/tests/polyglot/fragments/javascript"
  ;;
test)
  run_test
  ;;
*)
  echo "usage: $0 build OUTDIR | test" >&2
  exit 2
  ;;
esac
