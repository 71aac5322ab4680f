#!/usr/bin/env bash
# Install into a staging prefix, then build and run a consumer with nothing
# but `pkg-config --cflags --libs futoin_async`.
# usage: tests/install/check.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
DESTDIR="$stage" meson install -C "$build" --quiet --no-rebuild
root="$stage$prefix"
pc="$root/$libdir/pkgconfig"
test -f "$pc/futoin_async.pc" || { echo "install: no futoin_async.pc in $pc"; exit 1; }
for h in ftn12.h async.h errors.h export.h sync.h ffi.h sys/ext.h sys/wrap.h sys/host.h; do
  test -f "$root/include/futoin/$h" || { echo "install: header $h missing"; exit 1; }
done
export PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_PATH="$pc"
flags=$(pkg-config --cflags --libs futoin_async)
echo "pkg-config: $flags"
cc -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror -o "$stage/consumer" "$src/tests/install/consumer.c" $flags
LD_LIBRARY_PATH="$root/$libdir" "$stage/consumer"
# the soname is versioned
objdump -p "$root/$libdir/libfutoin_async.so" | grep -q 'SONAME.*libfutoin_async.so.0' \
  || { echo "install: unversioned soname"; exit 1; }
# a dlopen consumer of the installed library: one dlsym, negotiated tables
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags futoin_async) \
  -DFUTOIN_LIB_PATH='"unused"' -o "$stage/dlopen_consumer" \
  "$src/tests/dlopen/dlopen_consumer.c" -ldl
"$stage/dlopen_consumer" "$root/$libdir/libfutoin_async.so.0"
echo "install: consumer built from pkg-config and ran; dlopen of the installed .so negotiated"

