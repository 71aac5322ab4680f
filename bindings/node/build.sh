#!/usr/bin/env bash
# Builds the npm package of the Node.js binding from this checkout:
#   1. the addon and the library in the checkout's meson build (build/);
#   2. native/: futoin_async.node and libfutoin_async.so.0 beside it
#      (RUNPATH $ORIGIN, set with patchelf), so the package carries its
#      own copy of the library, as the wheel and the rock do;
#   3. `npm pack` into OUT (default build/node): futoin-async-<version>.tgz,
#      which `npm install ./futoin-async-<version>.tgz` installs offline.
# Last line: "node: built OUT/<file>.tgz".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/node}
mkdir -p "$out"; out=$(cd "$out" && pwd)
[ -d "$repo/build" ] || meson setup "$repo/build" "$repo" >/dev/null
ninja -C "$repo/build" -j2 bindings/node/futoin_async.node >/dev/null
rm -rf "$here/native"; mkdir -p "$here/native"
cp "$repo/build/bindings/node/futoin_async.node" "$here/native/"
cp -L "$repo/build/runtime/libfutoin_async.so.0" "$here/native/"
patchelf --set-rpath '$ORIGIN' "$here/native/futoin_async.node"
tgz=$(cd "$here" && npm pack --silent --pack-destination "$out" | tail -1)
echo "node: built $out/$tgz"
