#!/usr/bin/env bash
# Install into a staging prefix, then build and run a consumer with nothing
# but `pkg-config --cflags --libs futoin_async`; the language host plug-ins
# the build made are installed into <libdir>/futoin_async/futoin-hosts/
# and a program of the installed library finds them there by itself.
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
for h in ftn12.h async.h errors.h export.h sync.h ffi.h trace.h sys/ext.h sys/wrap.h sys/host.h sys/hooks.h; do
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
# the host plug-ins the build made (bindings/meson.build, options
# host_python, host_lua, host_java): installed, and found by the installed
# library from nothing but PATH (find_hosts.c)
# A plug-in must be there when its option is not disabled and its
# language's development files are on this machine (what `auto` looks for).
hosts=$root/$libdir/futoin_async/futoin-hosts
option() { # name -> its value
  meson introspect "$build" --buildoptions | /usr/bin/python3 -c \
    'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]][0])' "$1"
}
dev_files() { # language -> status 0 if its development files are here
  case $1 in
  python) /usr/bin/python3 -c 'import os,sys,sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ;;
  lua) pkg-config --exists lua5.4 ;;
  java) javac=$(command -v javac) && test -f "$(dirname "$(readlink -f "$javac")")/../include/jni.h" ;;
  esac
}
langs=()
for lang in python lua java; do
  if [ -f "$hosts/libfutoin_host_$lang.so" ]; then
    langs+=("$lang")
  elif [ "$(option "host_$lang")" != disabled ] && dev_files "$lang"; then
    echo "install: no libfutoin_host_$lang.so in $hosts (option host_$lang is" \
         "$(option "host_$lang"), and the $lang development files are here)"
    exit 1
  fi
done
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags futoin_async) -o "$stage/find_hosts" \
  "$src/tests/install/find_hosts.c" $(pkg-config --libs futoin_async) -ldl
if [ ${#langs[@]} -gt 0 ]; then
  found=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$root/$libdir" "$stage/find_hosts" "${langs[@]}") \
    || { echo "install: the installed library did not find its plug-ins:"; echo "$found"; exit 1; }
  for lang in "${langs[@]}"; do
    grep -qx "$lang $hosts/libfutoin_host_$lang.so" <<<"$found" \
      || { echo "install: $lang's plug-in not found in $hosts:"; echo "$found"; exit 1; }
  done
  echo "install: host plug-ins installed and found in <libdir>/futoin_async/futoin-hosts: ${langs[*]}"
fi
# a language with no plug-in installed: the error says what provides it
nohost=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$root/$libdir" "$stage/find_hosts" cobol) && {
  echo "install: a host for 'cobol' was found: $nohost"; exit 1; }
grep -q "cobol none: no host for language 'cobol'" <<<"$nohost" \
  || { echo "install: unexpected answer for 'cobol': $nohost"; exit 1; }
echo "install: consumer built from pkg-config and ran; dlopen of the installed .so negotiated"

