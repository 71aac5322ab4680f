#!/usr/bin/env bash
# Tests of the Node.js binding: node's built-in test runner (node:test, no
# dependencies) over tests/*.test.js, against the addon of the checkout's
# meson build (build/bindings/node/futoin_async.node; built here when
# missing) or $FUTOIN_ASYNC_NODE_ADDON; then the npm tarball installed
# offline into a fresh project outside the checkout (tests/package/).
#
#   bash bindings/node/test.sh
#
# Last line: "node: N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ -z "${FUTOIN_ASYNC_NODE_ADDON:-}" ]; then
  if [ ! -d "$repo/build" ]; then
    meson setup "$repo/build" "$repo" > /dev/null || { echo "node: 0 passed, 1 failed"; exit 1; }
  fi
  ninja -C "$repo/build" -j2 bindings/node/futoin_async.node > /dev/null || {
    echo "node: the addon does not build" >&2; echo "node: 0 passed, 1 failed"; exit 1; }
fi
out=$(cd "$here" && node --test --test-reporter=tap tests/ 2>&1)
status=$?
printf '%s\n' "$out" | grep -E '^(not ok|# (pass|fail))' >&2
pass=$(printf '%s\n' "$out" | sed -n 's/^# pass \([0-9]*\)$/\1/p' | tail -1)
fail=$(printf '%s\n' "$out" | sed -n 's/^# fail \([0-9]*\)$/\1/p' | tail -1)
[ -n "$pass" ] || { pass=0; fail=1; }
fail=${fail:-0}

# The npm package as a user gets it: build.sh packs the tarball (staged
# under build/), `npm install --offline` puts it into a fresh project
# outside the checkout, and tests/package/check.js runs there with nothing
# of the checkout in its environment (env -i: no NODE_PATH, no
# FUTOIN_ASYNC_NODE_ADDON): its own addon and library, a flow with a step
# of C, an error with its async stack. Its checks count with the others.
pkg_check() {
  local tmp tgz log p f
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/futoin-node-pkg.XXXXXX")
  log=$tmp/log
  if ! tgz=$(bash "$here/build.sh" "$tmp/dist" 2>"$log" | sed -n 's/^node: built //p') || [ -z "$tgz" ]; then
    cat "$log" >&2; echo "package: the tarball does not build" >&2
    rm -rf "$tmp"; pkg_pass=0; pkg_fail=1; return
  fi
  mkdir -p "$tmp/home" "$tmp/proj"
  printf '{"name":"futoin-async-package-check","version":"1.0.0","private":true}\n' >"$tmp/proj/package.json"
  cp "$here/tests/package/check.js" "$tmp/proj/"
  local envi=(env -i "HOME=$tmp/home" "PATH=$(dirname "$(command -v node)"):/usr/bin:/bin" "LANG=C.UTF-8")
  if ! (cd "$tmp/proj" && "${envi[@]}" npm install --offline --no-audit --no-fund --loglevel=error \
          "$tgz" >"$log" 2>&1); then
    cat "$log" >&2; echo "package: npm install --offline of $(basename "$tgz") failed" >&2
    rm -rf "$tmp"; pkg_pass=0; pkg_fail=1; return
  fi
  (cd "$tmp/proj" && "${envi[@]}" node check.js) >"$log" 2>&1
  grep -E '^not ok' "$log" >&2
  read -r p f < <(sed -n 's/^package: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -1)
  if [ -z "${p:-}" ]; then
    cat "$log" >&2; p=0; f=1
  fi
  echo "package: $p passed, $f failed ($(basename "$tgz"), npm install --offline, env -i)" >&2
  rm -rf "$tmp"
  pkg_pass=$p; pkg_fail=$f
}
pkg_pass=0; pkg_fail=0
pkg_check
pass=$((pass + pkg_pass)); fail=$((fail + pkg_fail))

echo "node: $pass passed, $fail failed"
[ $status -eq 0 ] && [ "$fail" -eq 0 ]
