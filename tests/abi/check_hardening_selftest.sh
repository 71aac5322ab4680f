#!/usr/bin/env bash
# The hardening check itself can tell: a tiny shared object built with every
# hardening flag passes all five checks of tests/abi/check_hardening.sh, the
# same source built without them fails all five. A check that passed
# everything (or nothing) would fail here.
# Last line: "hardening-selftest: N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
cat >"$tmp/t.c" <<'EOF'
#include <stdio.h>
int hardening_probe(const char* s, char* out, size_t n);
int hardening_probe(const char* s, char* out, size_t n)
{
    char buf[64];
    int k = snprintf(buf, sizeof(buf), "%s!", s);
    if (!out) {
        fprintf(stderr, "%s\n", buf);
    }
    return snprintf(out, n, "%s", buf) + k;
}
EOF
cc=${CC:-cc}
if ! $cc -O2 -fPIC -shared -fstack-protector-strong -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 \
       -Wl,-z,relro,-z,now,-z,noexecstack -o "$tmp/hardened.so" "$tmp/t.c" \
   || ! $cc -O2 -fPIC -shared -fno-stack-protector -U_FORTIFY_SOURCE \
       -Wl,-z,norelro,-z,lazy,-z,execstack -o "$tmp/plain.so" "$tmp/t.c" 2>/dev/null; then
  echo "hardening-selftest: cannot build the probes"
  echo "hardening-selftest: 0 passed, 1 failed"; exit 1
fi
# expect PROBE LAST_LINE WHAT: the check of PROBE ends with LAST_LINE
expect() {
  local out
  out=$(bash "$here/check_hardening.sh" --files --fortify "$tmp/$1")
  if grep -qx "$2" <<<"$out"; then
    pass=$((pass + 1))
  else
    echo "hardening-selftest: FAIL: $3:"; echo "$out"
    fail=$((fail + 1))
  fi
}
expect hardened.so 'hardening: 5 passed, 0 failed' "the hardened probe did not pass all five"
expect plain.so 'hardening: 0 passed, 5 failed' "the plain probe did not fail all five"
echo "hardening-selftest: $pass passed, $fail failed"
[ "$fail" = 0 ]
