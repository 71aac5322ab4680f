#!/usr/bin/env bash
# Builds the Lua 5.4 rock from this checkout, with Debian's luarocks and
# nothing from the network:
#   1. `luarocks --lua-version=5.4 make --tree OUT/tree`: the rockspec's
#      build step (Makefile, meson) builds the runtime libfutoin_async.so.0,
#      the SWIG module core.so and the host plug-in libfutoin_host_lua.so
#      (in bindings/lua/build-rock/, configured there on first use, so a
#      fresh clone builds too) and installs them with the Lua layer into
#      the tree OUT/tree
#   2. `luarocks pack futoin_async` of that install: the binary rock
#      OUT/futoin_async-<version>-1.linux-<arch>.rock, which
#      `luarocks --lua-version=5.4 install <file>.rock` installs elsewhere
#
# usage: bindings/lua/build.sh [OUT]     (default OUT: build/lua)
# Last line: "lua: built OUT/<file>.rock". luarocks' output goes to
# OUT/make.log and OUT/pack.log (their ends are printed on failure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/lua}
mkdir -p "$out"
out=$(cd "$out" && pwd)

rocks() { luarocks --lua-version=5.4 "$@"; }
fail() { # message log
  echo "build.sh: $1" >&2
  tail -40 "$2" >&2
  exit 1
}

rm -rf "$out/tree" "$out"/futoin_async-*.rock
(cd "$here" && rocks make --tree "$out/tree") >"$out/make.log" 2>&1 \
  || fail "luarocks make failed" "$out/make.log"
(cd "$out" && rocks --tree "$out/tree" pack futoin_async) >"$out/pack.log" 2>&1 \
  || fail "luarocks pack failed" "$out/pack.log"
rock=$(ls "$out"/futoin_async-*.rock 2>/dev/null | head -1)
[ -n "$rock" ] || fail "no .rock was packed" "$out/pack.log"
echo "lua: built $rock"
