#!/usr/bin/env bash
# The prototype plug-in libfutoin_host_javascript.so (Node embedded in
# another host program, README.md "JavaScript steps in other hosts") in a C
# host program: tests/polyglot/embed_host.c.
#
#   bash bindings/node/embed-test.sh [BUILD_DIR]
#
# BUILD_DIR (default build) must be configured with -Dnode_embed=PREFIX
# (Debian's libnode-dev under PREFIX). Debian's libnode loads parts of
# Node from /usr/share/nodejs (node-acorn, node-cjs-module-lexer,
# node-undici). Where those cannot be installed (next to NodeSource's
# nodejs, which conflicts with them), FUTOIN_NODE_EMBED_SHARE=DIR names a
# folder holding their unpacked usr/share: the program then runs in a
# private mount namespace with DIR overlaid on /usr/share (root only).
# Last line: "node-embed: N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
ninja -C "$build" -j2 bindings/node/futoin_async.node bindings/node/libfutoin_host_javascript.so \
  tests/libpolyglot_fragments.so >/dev/null || {
  echo "node-embed: the plug-in is not built (meson configure $build -Dnode_embed=PREFIX)"
  echo "node-embed: 0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d /tmp/futoin-node-embed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -I"$repo/abi" -o "$tmp/embed_host" \
  "$here/tests/polyglot/embed_host.c" -L"$build/runtime" -l:libfutoin_async.so.0 \
  -Wl,-rpath,"$build/runtime" || { echo "node-embed: 0 passed, 1 failed"; exit 1; }
env_run=(env FUTOIN_HOST_PATH="$build/bindings/node" FUTOIN_NODE_HOST_LIB="$here/lib/index.js"
  NODE_PATH="$repo/tests/polyglot/fragments/javascript"
  FUTOIN_POLYGLOT_C_FRAGMENTS="$build/tests/libpolyglot_fragments.so" "$tmp/embed_host")
if [ -n "${FUTOIN_NODE_EMBED_SHARE:-}" ]; then
  unshare -m bash -c 'mount -t overlay overlay -o lowerdir="$1":/usr/share /usr/share && shift && exec "$@"' \
    _ "$FUTOIN_NODE_EMBED_SHARE" "${env_run[@]}"
else
  "${env_run[@]}"
fi
