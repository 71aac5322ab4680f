#!/usr/bin/env bash
# The built library is hardened (issue 10 item 6), read back from the ELF
# file itself so that a build change that drops a flag fails here:
#   - full RELRO: a GNU_RELRO segment and BIND_NOW (-z relro -z now);
#   - a non-executable stack: GNU_STACK without the E flag;
#   - the stack protector: the library calls __stack_chk_fail;
#   - _FORTIFY_SOURCE=2 (optimised builds): checked variants (__*_chk) of
#     the libc calls it makes, and none of the unchecked ones they replace.
# Usage: tests/abi/check_hardening.sh BUILD_DIR|ELF_FILE [--fortify] ; last
# line "hardening: N passed, M failed". An ELF file (a binding's module or
# host plug-in, a packaged copy of the library) is checked as it is.
set -uo pipefail
build=${1:-build}
if [ -f "$build" ]; then
  lib=$build
else
  lib=$(ls "$build"/runtime/libfutoin_async.so.*.*.* 2>/dev/null | head -n1)
fi
pass=0; fail=0
ok() { echo "hardening: ok: $*"; pass=$((pass + 1)); }
bad() { echo "hardening: FAIL: $*"; fail=$((fail + 1)); }
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
  echo "hardening: no runtime/libfutoin_async.so.X.Y.Z in '$build'"
  echo "hardening: 0 passed, 1 failed"; exit 1
fi
prog=$(readelf -lW "$lib")
dyn=$(readelf -dW "$lib")
syms=$(readelf --dyn-syms -W "$lib")

grep -q 'GNU_RELRO' <<<"$prog" && ok "GNU_RELRO segment" || bad "no GNU_RELRO segment (-z relro)"
if grep -qE '\(BIND_NOW\)|\(FLAGS\).*\bNOW\b|\(FLAGS_1\).*\bNOW\b' <<<"$dyn"; then
  ok "BIND_NOW (-z now)"
else
  bad "no BIND_NOW: lazy binding (-z now missing)"
fi
stack=$(grep 'GNU_STACK' <<<"$prog")
if [ -z "$stack" ]; then
  bad "no GNU_STACK header: the stack may be executable"
elif grep -qE 'RWE|\bE\b' <<<"$(awk '{print $(NF-1)}' <<<"$stack")"; then
  bad "executable stack: $stack"
else
  ok "non-executable stack"
fi
grep -q '__stack_chk_fail' <<<"$syms" && ok "stack protector (__stack_chk_fail)" \
  || bad "no __stack_chk_fail: built without -fstack-protector-strong"
# _FORTIFY_SOURCE only works in optimised builds: checked by the caller
# passing --fortify for such a build.
if [ "${2:-}" = "--fortify" ]; then
  chk=$(grep -oE '__[a-z]+_chk' <<<"$syms" | grep -v '__stack_chk' | sort -u | tr '\n' ' ')
  # memcpy/memset stay plain where the object size is unknown; formatted
  # output and string copies are always routed through __*_chk.
  plain=$(grep -oE ' (snprintf|vsnprintf|sprintf|vsprintf|fprintf|strcpy|strcat)(@|$)' <<<"$syms" | sort -u | tr '\n' ' ')
  if [ -n "$chk" ] && [ -z "$plain" ]; then
    ok "_FORTIFY_SOURCE: $chk"
  else
    bad "_FORTIFY_SOURCE: checked calls '${chk}', unchecked '${plain}'"
  fi
fi
echo "hardening: $pass passed, $fail failed"
[ "$fail" = 0 ]
