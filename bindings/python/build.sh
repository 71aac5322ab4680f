#!/usr/bin/env bash
# Builds the Python binding's wheels with Debian's tools only (python3-build,
# python3-mesonpy, meson, patchelf; no PyPI): one per CPython >= 3.11 on the
# machine (SWIG's -builtin types use CPython's full API: no abi3 wheel).
# Each holds the package futoin_async with _core, the library
# libfutoin_async.so.0 it links to, the host plug-in
# futoin_async/futoin-hosts/libfutoin_host_python.so, and libuv.so.1 and
# libffi.so.8 copied from the system (build_wheel.py: every ELF needs
# nothing outside the wheel but glibc's own libraries, RUNPATH $ORIGIN;
# tagged cpXY-cpXY-manylinux_2_N_x86_64). The core library is built as part
# of each wheel, so a fresh clone needs nothing else.
#
#   - Debian's /usr/bin/python3 (3.11): meson-python, as `python3 -m build`
#     does (pyproject.toml), then build_wheel.py repair;
#   - every other CPython found (build_wheel.py pythons: pyenv's versions,
#     /usr/local/bin, PATH; one per X.Y not built yet): meson with
#     -Dpython=PATH (Debian's meson-python and meson's python module only
#     run under /usr/bin/python3), `meson install`, build_wheel.py pack.
#     A fresh Debian 12 has only 3.11: then only that wheel.
#
# usage: bash bindings/python/build.sh [OUT]
#   OUT  where the wheels go (default: build/python under the repository);
#        the wheels already there are replaced, the build's log is
#        OUT/build.log (its tail is shown on failure)
# Prints every wheel's path, the one for /usr/bin/python3 last.
#
# meson-python 0.12 (Debian 12) writes into the source tree
# (.mesonpy-native-file.ini, its build directory): the wheels are built from
# a temporary copy of the sources they need, never from the checkout.
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
rm -rf "$src/bindings/python/build" "$src/bindings/python/venv"

fail() { # message
  tail -40 "$out/build.log" >&2
  echo "build.sh: $1 (log: $out/build.log)" >&2
  exit 1
}

rm -f "$out"/futoin_async-*.whl
: >"$out/build.log"
mkdir -p "$src/raw"
# Debian's CPython: meson-python (the pyproject.toml way)
"$PY" -m build --no-isolation --wheel --outdir "$src/raw" "$src/bindings/python" \
  >>"$out/build.log" 2>&1 || fail "building the wheel for $PY failed"
raw=$(ls "$src/raw"/futoin_async-*.whl 2>/dev/null | head -1)
[ -n "$raw" ] || fail "meson-python made no wheel"
main=$("$PY" "$here/build_wheel.py" repair "$raw" "$out" 2>>"$out/build.log") \
  || fail "repairing $raw failed"
built=" $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])') "

# every other CPython >= 3.11: meson with -Dpython=PATH, then pack
"$PY" "$here/build_wheel.py" pythons 2>>"$out/build.log" >"$src/pythons" \
  || fail "looking for CPythons failed"
while read -r ver py; do
  case "$built" in *" $ver "*) continue ;; esac
  built="$built$ver "
  b=$src/build-$ver
  echo "== CPython $ver: $py" >>"$out/build.log"
  { meson setup "$b" "$src/bindings/python" -Dpython="$py" -Dbuildtype=release \
      -Db_ndebug=if-release \
    && ninja -C "$b" \
    && DESTDIR="$src/stage-$ver" meson install -C "$b" --no-rebuild; } \
    >>"$out/build.log" 2>&1 || fail "building the wheel for $py failed"
  pkg=$(find "$src/stage-$ver" -path '*/site-packages/futoin_async' -type d | head -1)
  [ -n "$pkg" ] || fail "meson install for $py put no futoin_async folder"
  "$PY" "$here/build_wheel.py" pack "$pkg" "$out" 2>>"$out/build.log" \
    || fail "packing the wheel for $py failed"
done <"$src/pythons"
echo "$main"
