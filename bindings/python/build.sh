#!/usr/bin/env bash
# Builds the Python binding's wheel with Debian's tools only (python3-build,
# python3-mesonpy; no PyPI): the package futoin_async with _core, the
# library libfutoin_async.so.0 it links to and the host plug-in
# futoin_async/futoin-hosts/libfutoin_host_python.so. The core library is
# built as part of the wheel, so a fresh clone needs nothing else.
#
# usage: bash bindings/python/build.sh [OUT]
#   OUT  where the wheel goes (default: build/python under the repository);
#        the wheels already there are replaced, the build's log is
#        OUT/build.log (its tail is shown on failure)
# Prints the wheel's path last.
#
# meson-python 0.12 (Debian 12) writes into the source tree
# (.mesonpy-native-file.ini, its build directory): the wheel is built from
# a temporary copy of the sources it needs, never from the checkout.
# /usr/bin/python3 is named because a python3 earlier on PATH (pyenv,
# conda) lacks Debian's build modules.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3
export LC_ALL=C.UTF-8

out=${1:-$repo/build/python}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$(mktemp -d "${TMPDIR:-/tmp}/futoin-py-src.XXXXXX")
trap 'rm -rf "$src"' EXIT

mkdir -p "$src/bindings"
cp -r "$repo/meson.build" "$repo/meson_options.txt" "$repo/abi" "$repo/runtime" "$src/"
cp -r "$repo/bindings/futoin_async.i" "$repo/bindings/python" "$src/bindings/"

rm -f "$out"/futoin_async-*.whl
if ! "$PY" -m build --no-isolation --wheel --outdir "$out" "$src/bindings/python" \
     >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log" >&2
  echo "build.sh: building the wheel failed (log: $out/build.log)" >&2
  exit 1
fi
whl=$(ls "$out"/futoin_async-*.whl 2>/dev/null | head -1)
if [ -z "$whl" ]; then
  echo "build.sh: no wheel in $out" >&2
  exit 1
fi
echo "$whl"
