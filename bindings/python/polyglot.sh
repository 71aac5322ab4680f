#!/usr/bin/env bash
# The Python side of the polyglot matrix (tests/polyglot/README.md).
#
#   bash bindings/python/polyglot.sh build OUTDIR
#       Builds the wheel (build.sh: Debian's python3-build +
#       python3-mesonpy, from a copy of the sources) and unpacks it into
#       OUTDIR/site: the package futoin_async with _core,
#       libfutoin_async.so.0 and the host plug-in
#       futoin_async/futoin-hosts/libfutoin_host_python.so. Prints the
#       environment the other hosts need, one KEY=VALUE a line:
#         PYTHONPATH      tests/polyglot/fragments/python and OUTDIR/site:
#                         the user's modules and the package, through
#                         which the library finds the plug-in (each
#                         PYTHONPATH entry's futoin_async/futoin-hosts/,
#                         README "Polyglot set-up")
#         FUTOIN_PY_SITE  OUTDIR/site
#       (The plug-in needs no PYTHONPATH for the package itself: it adds the
#       folder it ships in to sys.path when futoin_async is not importable.)
#   bash bindings/python/polyglot.sh test
#       The Python host's matrix (bindings/python/tests/polyglot/
#       test_polyglot_host.py, pytest under /usr/bin/python3): Python steps
#       with steps of C, Lua, Java and Python itself (by name) in one flow.
#       Uses the environment above and
#       FUTOIN_POLYGLOT_C_FRAGMENTS, LUA_PATH, LUA_CPATH,
#       FUTOIN_JAVA_CLASSPATH as tests/polyglot/run.sh exports them; then
#       tests/polyglot/test_other_hosts.py: Lua and Java programs as hosts
#       of Python `async def` and timer steps, of steps raising SystemExit
#       or KeyboardInterrupt and of a CPython that cannot start
#       (FUTOIN_JAVA_POLYGLOT_OUT,
#       LUA_PATH, LUA_CPATH; a host not built is skipped); run
#       alone, it builds the wheel and the C fragments into a temporary
#       folder first (then only the languages whose packages the library
#       finds through PYTHONPATH, LUA_CPATH and CLASSPATH can pass).
#       FUTOIN_POLYGLOT_LANGS picks the fragment languages (default
#       "c lua java python"). Last line:
#         polyglot-python: N passed, M failed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3
export LC_ALL=C.UTF-8

build() { # outdir
  local out site whl
  out=$(mkdir -p "$1" && cd "$1" && pwd)
  site=$out/site
  rm -rf "$site" "$out/dist"
  # build.sh: from a copy of the sources (meson-python 0.12 writes into
  # the source tree); its log is OUTDIR/dist/build.log
  whl=$(bash "$here/build.sh" "$out/dist" | tail -1) && [ -n "$whl" ] || return 1
  "$PY" -m zipfile -e "$whl" "$site" || return 1
  [ -f "$site/futoin_async/futoin-hosts/libfutoin_host_python.so" ] || {
    echo "the wheel has no host plug-in" >&2
    return 1
  }
  echo "PYTHONPATH=$repo/tests/polyglot/fragments/python:$site"
  echo "FUTOIN_PY_SITE=$site"
}

run_test() {
  local tmp=""
  if [ -z "${FUTOIN_PY_SITE:-}" ]; then
    # alone: build what the runner would have built
    tmp=$(mktemp -d /tmp/futoin-py-polyglot.XXXXXX)
    # expanded now: tmp is local, gone when the EXIT trap runs
    trap "rm -rf '$tmp'" EXIT
    local line
    while IFS= read -r line; do
      case "$line" in
        *=*) export "${line?}" ;;
      esac
    done < <(build "$tmp/py") || { echo "polyglot-python: 0 passed, 1 failed"; return 1; }
    if [ -z "${FUTOIN_POLYGLOT_C_FRAGMENTS:-}" ]; then
      cc -std=c11 -O1 -shared -fPIC -fvisibility=hidden -DFUTOIN_BUILDING_LIBRARY \
        -I "$repo/abi" -o "$tmp/libpolyglot_fragments.so" \
        "$repo/tests/polyglot/fragments/c/polyglot_fragments.c" || {
        echo "polyglot-python: 0 passed, 1 failed"; return 1; }
      export FUTOIN_POLYGLOT_C_FRAGMENTS=$tmp/libpolyglot_fragments.so
    fi
  fi
  # the package first: the fragments' folder is on PYTHONPATH for the
  # plug-ins of other hosts, and must not shadow the installed package
  export PYTHONPATH="$FUTOIN_PY_SITE:$repo/tests/polyglot/fragments/python${PYTHONPATH:+:$PYTHONPATH}"
  local log rc
  log=$(mktemp /tmp/futoin-py-polyglot-log.XXXXXX)
  # no faulthandler: a JVM started in the process owns SIGSEGV, and pytest
  # would put its own handler back over the JVM's at the end; the suite's
  # conftest.py one folder up is not this test's (--confcutdir)
  (cd "$(dirname "$log")" && "$PY" -m pytest -p no:cacheprovider -p no:faulthandler \
      --confcutdir "$here/tests/polyglot" \
      -q -rfE "$here/tests/polyglot/test_polyglot_host.py" \
      "$here/tests/polyglot/test_other_hosts.py") >"$log" 2>&1
  rc=$?
  tail -80 "$log"
  local sum passed failed
  sum=$(grep -E '^(=+ )?[0-9]+ (passed|failed|errors?)' "$log" | tail -1)
  passed=$(grep -oE '[0-9]+ passed' <<<"$sum" | awk '{print $1}')
  failed=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$sum" | awk '{s += $1} END {print s + 0}')
  passed=${passed:-0}; failed=${failed:-0}
  if [ $rc -ne 0 ] && [ "$failed" = 0 ]; then failed=1; fi
  rm -f "$log"
  echo "polyglot-python: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}

case "${1:-}" in
build)
  [ -n "${2:-}" ] || { echo "usage: $0 build OUTDIR" >&2; exit 2; }
  build "$2"
  ;;
test)
  run_test
  ;;
*)
  echo "usage: $0 build OUTDIR | test" >&2
  exit 2
  ;;
esac
