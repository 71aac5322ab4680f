#!/usr/bin/env bash
# Builds the npm package of the Node.js binding from this checkout:
#   1. the addon and the library in the checkout's meson build (build/);
#   2. a staged copy of the package under OUT/stage/ (never in the source
#      tree: lib/native.js of a checkout loads the build tree's addon, and a
#      native/ folder left there would go stale): package.json, lib/,
#      index.d.ts, README.md and native/ with futoin_async.node and
#      libfutoin_async.so.0 beside it (RUNPATH $ORIGIN, set with patchelf),
#      so the package carries its own copy of the library, as the wheel and
#      the rock do;
#   3. `npm pack` of the stage into OUT (default build/node):
#      futoin-async-<version>.tgz, which
#      `npm install --offline ./futoin-async-<version>.tgz` installs.
# Last line: "node: built OUT/<file>.tgz".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/node}
mkdir -p "$out"; out=$(cd "$out" && pwd)
[ -d "$repo/build" ] || meson setup "$repo/build" "$repo" >/dev/null
ninja -C "$repo/build" -j2 bindings/node/futoin_async.node >/dev/null
# a native/ an older build.sh left in the source tree: gone (untracked)
rm -rf "$here/native"
stage=$out/stage
rm -rf "$stage"; mkdir -p "$stage/native"
cp -r "$here/package.json" "$here/index.d.ts" "$here/README.md" "$here/lib" "$stage/"
cp "$repo/build/bindings/node/futoin_async.node" "$stage/native/"
cp -L "$repo/build/runtime/libfutoin_async.so.0" "$stage/native/"
patchelf --set-rpath '$ORIGIN' "$stage/native/futoin_async.node"
tgz=$(cd "$stage" && npm pack --silent --pack-destination "$out" | tail -1)
echo "node: built $out/$tgz"
