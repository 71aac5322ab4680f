#!/usr/bin/env bash
# Every ELF the project ships is hardened (issue 10 item 6, issue 18 item 3),
# read back from the ELF file itself so that a build change that drops a
# flag fails here:
#   - full RELRO: a GNU_RELRO segment and BIND_NOW (-z relro -z now);
#   - a non-executable stack: GNU_STACK without the E flag;
#   - the stack protector: the ELF calls __stack_chk_fail;
#   - _FORTIFY_SOURCE=2 (optimised builds, --fortify): no unchecked output
#     to a stream (fprintf, printf, ...: always routed to __*_chk when
#     fortified), and the checked calls it makes are listed. An ELF whose
#     only such calls write into memory of unknown size (snprintf into a
#     pointer) cannot be told apart from an unfortified one and passes.
#
# Usage:
#   tests/abi/check_hardening.sh BUILD_DIR|ELF_FILE [--fortify]
#       the core library of BUILD_DIR only (runtime/libfutoin_async.so.X.Y.Z),
#       or one ELF file as it is (the bindings' own tests check theirs so)
#   tests/abi/check_hardening.sh --shipped BUILD_DIR [--fortify]
#       every shipped ELF, where the test command (tests/run_all.sh) builds it
#       (the npm tarball is packed here, from BUILD_DIR's addon):
#         C        what `meson install` of BUILD_DIR installs (the library,
#                  the host plug-ins in <libdir>/futoin_async/futoin-hosts/,
#                  and any program that starts being installed)
#         Python   every ELF in the wheel BUILD_DIR/python/futoin_async-*.whl
#                  (the extension module, the host plug-in, the bundled core)
#         Lua      the rock's files as `luarocks make` builds them in
#                  bindings/lua/build-rock/: core.so (the glue),
#                  host/libfutoin_host_lua.so, the bundled libfutoin_async.so.0
#         Java     every ELF under native/ in BUILD_DIR/java/futoin-async.jar
#                  (libfutoin_java.so, the bundled core) and the plug-in
#                  BUILD_DIR/java/libfutoin_host_java.so next to it
#         Node.js  every ELF under native/ in the npm tarball that
#                  bindings/node/build.sh packs from BUILD_DIR's addon
#                  (futoin_async.node, the bundled core)
#       An artifact that is not there counts as a failure: run it after the
#       bindings are built (tests/run_all.sh does).
#   tests/abi/check_hardening.sh --files [--fortify] ELF...
#       the given files
# Each check prints "hardening: ok: NAME: ..." or "hardening: FAIL: NAME: ...";
# the last line is "hardening: N passed, M failed" (one per check).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
pass=0; fail=0
ok() { echo "hardening: ok: $*"; pass=$((pass + 1)); }
bad() { echo "hardening: FAIL: $*"; fail=$((fail + 1)); }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check_elf FILE NAME FORTIFY(0|1)
check_elf() {
  local f=$1 name=$2 fortify=$3 prog dyn syms stack chk plain
  prog=$(readelf -lW "$f" 2>/dev/null)
  dyn=$(readelf -dW "$f" 2>/dev/null)
  syms=$(readelf --dyn-syms -W "$f" 2>/dev/null)
  if grep -q 'GNU_RELRO' <<<"$prog"; then
    ok "$name: GNU_RELRO segment"
  else
    bad "$name: no GNU_RELRO segment (-z relro)"
  fi
  if grep -qE '\(BIND_NOW\)|\(FLAGS\).*\bNOW\b|\(FLAGS_1\).*\bNOW\b' <<<"$dyn"; then
    ok "$name: BIND_NOW (-z now)"
  else
    bad "$name: no BIND_NOW: lazy binding (-z now missing)"
  fi
  stack=$(grep 'GNU_STACK' <<<"$prog")
  if [ -z "$stack" ]; then
    bad "$name: no GNU_STACK header: the stack may be executable"
  elif grep -qE 'RWE|\bE\b' <<<"$(awk '{print $(NF-1)}' <<<"$stack")"; then
    bad "$name: executable stack: $stack"
  else
    ok "$name: non-executable stack"
  fi
  if grep -q '__stack_chk_fail' <<<"$syms"; then
    ok "$name: stack protector (__stack_chk_fail)"
  else
    bad "$name: no __stack_chk_fail: built without -fstack-protector-strong"
  fi
  # _FORTIFY_SOURCE only works in optimised builds: checked when the caller
  # passes --fortify for such a build.
  if [ "$fortify" = 1 ]; then
    chk=$(grep -oE '__[a-z]+_chk' <<<"$syms" | grep -v '__stack_chk' | sort -u | tr '\n' ' ')
    # Output to a stream (fprintf, printf, ...) is always routed through
    # __*_chk when fortified: its check does not depend on a size. Calls
    # that write into memory (snprintf, memcpy, strcpy, ...) stay plain
    # where the destination's size is unknown, so they prove nothing.
    plain=$(grep -oE ' (fprintf|vfprintf|printf|vprintf|dprintf|vdprintf)(@|$)' <<<"$syms" \
            | sort -u | tr '\n' ' ')
    if [ -n "$plain" ]; then
      bad "$name: _FORTIFY_SOURCE: unchecked '${plain}' (checked '${chk}')"
    elif [ -n "$chk" ]; then
      ok "$name: _FORTIFY_SOURCE: $chk"
    else
      ok "$name: _FORTIFY_SOURCE: no call whose check does not depend on a size"
    fi
  fi
}

is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# check_tree DIR LABEL FORTIFY: every ELF under DIR (symlinks skipped: the
# file they name is checked)
check_tree() {
  local dir=$1 label=$2 fortify=$3 n=0 f
  while IFS= read -r -d '' f; do
    is_elf "$f" || continue
    check_elf "$f" "$label ${f#"$dir"/}" "$fortify"
    n=$((n + 1))
  done < <(find "$dir" -type f -print0 | sort -z)
  [ $n -gt 0 ] || bad "$label: no ELF file in it"
}

# need FILE LABEL: a shipped file that must exist
need() {
  if [ -f "$1" ]; then return 0; fi
  bad "$2: not built ($1 missing)"
  return 1
}

mode=core
case "${1:-}" in
--shipped) mode=shipped; shift ;;
--files) mode=files; shift ;;
esac
fortify=0

case $mode in
core)
  build=${1:-build}
  [ "${2:-}" = "--fortify" ] && fortify=1
  if [ -f "$build" ]; then
    # one ELF file as it is (a binding's own test checks its native files)
    if is_elf "$build"; then check_elf "$build" "$(basename "$build")" $fortify
    else bad "$build: not an ELF file"; fi
    echo "hardening: $pass passed, $fail failed"
    [ "$fail" = 0 ]; exit
  fi
  lib=$(ls "$build"/runtime/libfutoin_async.so.*.*.* 2>/dev/null | head -n1)
  if [ -z "$lib" ] || [ ! -f "$lib" ]; then
    echo "hardening: no runtime/libfutoin_async.so.X.Y.Z in '$build'"
    echo "hardening: 0 passed, 1 failed"; exit 1
  fi
  check_elf "$lib" "$(basename "$lib")" $fortify
  ;;
files)
  [ "${1:-}" = "--fortify" ] && { fortify=1; shift; }
  [ $# -gt 0 ] || bad "--files: no file given"
  for f in "$@"; do
    if is_elf "$f"; then check_elf "$f" "$f" $fortify; else bad "$f: not an ELF file"; fi
  done
  ;;
shipped)
  build=${1:-build}
  [ "${2:-}" = "--fortify" ] && fortify=1
  build=$(cd "$build" 2>/dev/null && pwd) || { bad "no build directory '${1:-build}'"; build=/nonexistent; }

  # C: what `meson install` installs (staged, nothing rebuilt)
  if meson install -C "$build" --no-rebuild --destdir "$tmp/stage" >"$tmp/install.log" 2>&1; then
    check_tree "$tmp/stage" "[c install]" $fortify
  else
    bad "[c install]: meson install failed"; tail -20 "$tmp/install.log"
  fi

  # Python: the wheel the test command built
  whl=$(ls "$build"/python/futoin_async-*.whl 2>/dev/null | head -n1)
  if need "${whl:-$build/python/futoin_async-*.whl}" "[python wheel]"; then
    mkdir -p "$tmp/wheel"
    if /usr/bin/python3 -m zipfile -e "$whl" "$tmp/wheel" 2>"$tmp/unzip.log"; then
      check_tree "$tmp/wheel" "[python wheel]" $fortify
    else
      bad "[python wheel]: cannot unpack $whl"
    fi
  fi

  # Lua: the rock's ELF files, as luarocks make built them
  rock=$repo/bindings/lua/build-rock
  for f in core.so host/libfutoin_host_lua.so libfutoin_async.so.0; do
    if need "$rock/$f" "[lua rock] $f"; then
      check_elf "$(readlink -f "$rock/$f")" "[lua rock] $f" $fortify
    fi
  done

  # Java: the jar's native libraries and the plug-in next to the jar
  jar=$build/java/futoin-async.jar
  if need "$jar" "[java jar]"; then
    mkdir -p "$tmp/jar"
    if /usr/bin/python3 -m zipfile -e "$jar" "$tmp/jar" 2>"$tmp/unzip.log" \
       && [ -d "$tmp/jar/native" ]; then
      check_tree "$tmp/jar" "[java jar]" $fortify
    else
      bad "[java jar]: no native/ in $jar"
    fi
  fi
  if need "$build/java/libfutoin_host_java.so" "[java] libfutoin_host_java.so"; then
    check_elf "$build/java/libfutoin_host_java.so" "[java] libfutoin_host_java.so" $fortify
  fi

  # Node.js: the npm tarball's native files (the addon and its library),
  # packed from this build as bindings/node/build.sh packs it for users
  if need "$build/bindings/node/futoin_async.node" "[node package] futoin_async.node"; then
    mkdir -p "$tmp/npm"
    tgz=$(bash "$repo/bindings/node/build.sh" "$tmp/npm/dist" 2>"$tmp/npm.log" | sed -n 's/^node: built //p')
    if [ -n "$tgz" ] && tar -xzf "$tgz" -C "$tmp/npm" && [ -d "$tmp/npm/package/native" ]; then
      check_tree "$tmp/npm/package" "[node package]" $fortify
    else
      bad "[node package]: the tarball does not build or has no native/"; tail -5 "$tmp/npm.log"
    fi
  fi
  ;;
esac

echo "hardening: $pass passed, $fail failed"
[ "$fail" = 0 ]
