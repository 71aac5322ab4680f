#!/usr/bin/env bash
# Tests of the Node.js binding: node's built-in test runner (node:test, no
# dependencies) over tests/*.test.js, against the addon of the checkout's
# meson build (build/bindings/node/futoin_async.node; built here when
# missing) or $FUTOIN_ASYNC_NODE_ADDON.
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
echo "node: $pass passed, ${fail:-0} failed"
[ $status -eq 0 ] && [ "${fail:-0}" -eq 0 ]
