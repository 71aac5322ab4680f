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
#   3. the source rock OUT/futoin_async-<version>-1.src.rock, which
#      `luarocks --lua-version=5.4 install <file>.src.rock` builds without
#      the checkout: OUT/futoin_async-<version>.tar.gz holds what the build
#      needs (the top project's meson files, abi/, runtime/, the shared
#      SWIG interface, bindings/lua/ but its tests; the files git tracks,
#      as they are in the work tree), and `luarocks pack` of a copy of the
#      rockspec whose source.url is that tarball (file://) puts both in it
#
# usage: bindings/lua/build.sh [OUT]     (default OUT: build/lua)
# Last line: "lua: built OUT/<file>.rock OUT/<file>.src.rock". luarocks'
# output goes to OUT/make.log, OUT/pack.log and OUT/pack-src.log (their
# ends are printed on failure).
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

rm -rf "$out/tree" "$out"/futoin_async-*.linux-*.rock
(cd "$here" && rocks make --tree "$out/tree") >"$out/make.log" 2>&1 \
  || fail "luarocks make failed" "$out/make.log"
(cd "$out" && rocks --tree "$out/tree" pack futoin_async) >"$out/pack.log" 2>&1 \
  || fail "luarocks pack failed" "$out/pack.log"
rock=$(ls "$out"/futoin_async-*.linux-*.rock 2>/dev/null | head -1)
[ -n "$rock" ] || fail "no .rock was packed" "$out/pack.log"

# 3. the source rock
spec=$(cd "$here" && ls futoin_async-*.rockspec)
version=$(sed -n 's/^version = "\(.*\)-[0-9]*"$/\1/p' "$here/$spec")
top_version=$(sed -n "s/^  version: '\(.*\)',\$/\1/p" "$repo/meson.build" | head -1)
[ "$version" = "$top_version" ] || {
  echo "build.sh: the rockspec's version $version is not the project's ($top_version)" >&2
  exit 1
}
name=futoin_async-$version
rm -rf "$out/dist" "$out/$name.tar.gz" "$out"/futoin_async-*.src.rock
mkdir -p "$out/dist/$name"
paths=(meson.build meson_options.txt README.md abi runtime bindings/futoin_async.i bindings/lua)
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$repo" && git ls-files -z -- "${paths[@]}" ':(exclude)bindings/lua/tests' \
                   ':(exclude)abi/baseline' ':(exclude)*.gitignore' \
     | xargs -0 cp -P --parents -t "$out/dist/$name")
else # an unpacked copy without git: the same folders, minus builds
  (cd "$repo" && find "${paths[@]}" \( -name 'build*' -o -name tests -o -name baseline \) -prune \
     -o \( -type f -o -type l \) -print0 | xargs -0 cp -P --parents -t "$out/dist/$name")
fi
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  -C "$out/dist" -czf "$out/$name.tar.gz" "$name"
sed -e "s|^   url = .*|   url = \"file://$out/$name.tar.gz\",|" \
    -e "s|^   dir = .*|   dir = \"$name/bindings/lua\",|" "$here/$spec" >"$out/dist/$spec"
(cd "$out" && rocks pack "$out/dist/$spec") >"$out/pack-src.log" 2>&1 \
  || fail "luarocks pack of the source rock failed" "$out/pack-src.log"
src_rock=$out/${spec%.rockspec}.src.rock
[ -f "$src_rock" ] || fail "no .src.rock was packed" "$out/pack-src.log"
rm -rf "$out/dist"
echo "lua: built $rock $src_rock"
