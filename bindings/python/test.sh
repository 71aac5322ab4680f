#!/usr/bin/env bash
# The Python binding's tests, as tests/run_all.sh runs them: the wheel
# build.sh built is installed into a fresh venv that sees Debian's pytest
# (--system-site-packages), and the pytest suite (tests/) runs against the
# installed package (FUTOIN_PY_REQUIRE_INSTALLED: never the source tree).
# Builds first (build.sh) unless --no-build. Shows the end of pytest's
# report; the last line is "python: N passed, M failed" (errors count as
# failures). The wheel for /usr/bin/python3 is the one tested here.
#
# With --wheels: the wheel check instead (tests/check_wheels.py): every
# wheel in OUT (one per CPython build.sh found): the NEEDED and RUNPATH of
# every ELF, the tags, and install + the suite under every CPython of its
# version on the machine; last line "python-wheels: N passed, M failed".
#
# usage: bash bindings/python/test.sh [--no-build] [--wheels] [OUT]
#   OUT  build.sh's output directory (default: build/python under the
#        repository); the venv is OUT/venv, pytest's log OUT/pytest.log
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3
export LC_ALL=C.UTF-8
build=1
wheels=0
while [ $# -gt 0 ]; do
  case "$1" in
  --no-build) build=0; shift ;;
  --wheels) wheels=1; shift ;;
  *) break ;;
  esac
done
out=${1:-$repo/build/python}
label=python
[ $wheels = 1 ] && label=python-wheels

fail() { # message
  echo "$1" >&2
  echo "$label: 0 passed, 1 failed"
  exit 1
}

if [ $build = 1 ]; then
  bash "$here/build.sh" "$out" >/dev/null || fail "test.sh: the wheel did not build"
fi
out=$(cd "$out" 2>/dev/null && pwd) || fail "test.sh: no $out (run build.sh first)"
if [ $wheels = 1 ]; then
  "$PY" "$here/tests/check_wheels.py" "$out"
  exit
fi
cp=$("$PY" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$(ls "$out"/futoin_async-*-"$cp"-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || fail "test.sh: no $cp wheel in $out (run build.sh first)"

rm -rf "$out/venv"
if ! { "$PY" -m venv --system-site-packages "$out/venv" \
       && "$out/venv/bin/pip" install -q --no-index --no-deps "$whl"; } \
     >"$out/pip.log" 2>&1; then
  tail -40 "$out/pip.log"
  fail "test.sh: installing $whl into a venv failed"
fi

log=$out/pytest.log
(cd "$out" && FUTOIN_PY_REQUIRE_INSTALLED=1 "$out/venv/bin/python" -m pytest \
   -p no:cacheprovider -q "$here/tests") >"$log" 2>&1
rc=$?
tail -n 25 "$log" | grep -vE '^\.+ *\[' || true
sum=$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1)
passed=$(grep -oE '[0-9]+ passed' <<<"$sum" | grep -oE '[0-9]+')
passed=${passed:-0}
failed=$(grep -oE '[0-9]+ (failed|error)' <<<"$sum" | grep -oE '[0-9]+' \
         | awk '{ s += $1 } END { print s + 0 }')
if [ $rc -ne 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "python: $passed passed, $failed failed"
[ "$failed" = 0 ]
