#!/usr/bin/env bash
# ABI gate: the public ABI of the built library must equal the committed
# baseline abi/baseline/libfutoin_async.abi.
#
# usage: tests/abi/check_abi.sh BUILD_DIR            # check
#        tests/abi/check_abi.sh BUILD_DIR --update   # rewrite the baseline
#
# Check: `abidw` (libabigail, Debian package abigail-tools) describes
# BUILD_DIR/runtime/libfutoin_async.so: its exported functions and
# variables and every type reachable from them. With --headers-dir abi/futoin
# and --drop-private-types only types defined in the public headers count,
# so the private layout behind opaque handles (struct futoin_tool …) may
# change freely. `abidiff` compares that with the baseline; ANY difference
# (a function added, removed or changed, a public type changed) fails and
# prints the abidiff report. The library needs DWARF (-g): meson's default
# buildtype debugoptimized has it, `release` does not.
#
# Update: --update writes the current ABI over the baseline, after printing
# what changed. That is a deliberate act, done in the same commit as the
# change that caused it (new functions in a new version node of
# runtime/futoin_async.map, a grown extension table …), so the baseline diff
# is reviewed with the code. Never update it to make CI green without
# knowing why the ABI moved. See tests/abi/README.md.
#
# Prints "abi: 1 passed, 0 failed" or "abi: 0 passed, 1 failed" (check) and
# exits non-zero on failure.
set -uo pipefail

usage() { echo "usage: $0 BUILD_DIR [--update]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
build=$1
update=0
if [ $# = 2 ]; then
  [ "$2" = --update ] || usage
  update=1
fi

src=$(cd "$(dirname "$0")/../.." && pwd)
baseline=$src/abi/baseline/libfutoin_async.abi

fail() {
  echo "abi: $*"
  echo "abi: 0 passed, 1 failed"
  exit 1
}

for tool in abidw abidiff readelf; do
  command -v "$tool" >/dev/null || fail "$tool not found (apt-get install abigail-tools binutils)"
done

lib=$(ls "$build"/runtime/libfutoin_async.so.*.*.* 2>/dev/null | head -n1)
[ -n "$lib" ] && [ -f "$lib" ] || fail "no runtime/libfutoin_async.so.X.Y.Z in '$build' (build it first)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# (not `readelf | grep -q`: with pipefail, grep's early exit fails readelf)
readelf -S "$lib" >"$tmp/sections" 2>&1
grep -q '\.debug_info' "$tmp/sections" \
  || fail "$lib has no debug info: build with -g (buildtype debug or debugoptimized)"

# Locations, paths and the architecture are left out: the baseline must not
# depend on where or on which machine it was built, and a moved header line
# is not an ABI change.
abidw --headers-dir "$src/abi/futoin" --drop-private-types \
      --drop-undefined-syms --no-show-locs --no-corpus-path \
      --no-comp-dir-path --no-architecture \
      --out-file "$tmp/current.abi" "$lib" >"$tmp/abidw.log" 2>&1 \
  || { cat "$tmp/abidw.log"; fail "abidw failed on $lib"; }

compare() { # old new -> report in $tmp/report, abidiff's status
  abidiff --no-default-suppression --harmless "$1" "$2" >"$tmp/report" 2>&1
}

if [ $update = 1 ]; then
  mkdir -p "$(dirname "$baseline")"
  if [ -f "$baseline" ]; then
    if compare "$baseline" "$tmp/current.abi"; then
      echo "abi: no ABI change against the baseline"
    else
      echo "abi: changes against the old baseline (review them in the commit):"
      cat "$tmp/report"
    fi
  fi
  cp "$tmp/current.abi" "$baseline"
  echo "abi: baseline written: ${baseline#"$src"/} (from $lib)"
  exit 0
fi

[ -f "$baseline" ] || fail "no baseline ${baseline#"$src"/}: create it with '$0 $build --update'"

compare "$baseline" "$tmp/current.abi"
rc=$?
if [ $rc -eq 0 ]; then
  echo "abi: $(grep -c '<elf-symbol ' "$baseline") symbols, ABI equals the baseline"
  echo "abi: 1 passed, 0 failed"
  exit 0
fi
# abidiff's status is a bit mask: 1 error, 2 usage, 4 ABI change, 8 incompatible.
echo "abi: the library's ABI differs from ${baseline#"$src"/} (abidiff status $rc):"
cat "$tmp/report"
if [ $((rc & 3)) -ne 0 ]; then
  echo "abi: abidiff itself failed"
else
  echo "abi: if the change is intended, run '$0 $build --update' and commit the"
  echo "abi: new baseline with the change (see tests/abi/README.md)"
fi
echo "abi: 0 passed, 1 failed"
exit 1
