#!/usr/bin/env bash
# The polyglot matrix: every host program (C, Python, Lua, Java) runs steps
# of every other language in one flow (tests/polyglot/README.md).
#
#   tests/polyglot/run.sh [BUILD_DIR]
#
# 1. builds the C fragments and the C host program in BUILD_DIR (default
#    build, which must be configured);
# 2. asks each binding to build its language host plug-in, its package and
#    its fragments: `bindings/<lang>/polyglot.sh build OUTDIR` prints the
#    environment the others need, one KEY=VALUE a line (FUTOIN_HOST_PATH_*
#    entries are joined into FUTOIN_HOST_PATH);
# 3. runs each host's matrix with all of that exported:
#    the C host (tests/polyglot/c_host.c), then `bindings/<lang>/polyglot.sh
#    test` for each language.
# Each host prints "polyglot-<host>: N passed, M failed"; the last line is
# their sum, "polyglot: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
langs=(python lua java)
work=$(mktemp -d /tmp/futoin-polyglot.XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0

if ! ninja -C "$build" tests/polyglot_c_host tests/libpolyglot_fragments.so \
       >"$work/ninja.log" 2>&1; then
  tail -30 "$work/ninja.log"
  echo "polyglot: 0 passed, 1 failed"
  exit 1
fi
export FUTOIN_POLYGLOT_C_FRAGMENTS=$(cd "$build" && pwd)/tests/libpolyglot_fragments.so

. tests/polyglot/hosts.sh
futoin_polyglot_hosts "$work" "${langs[@]}" || status=1

total_p=0; total_f=0
tally() { # log
  local line p f
  line=$(grep -E '^polyglot-[a-z]+: [0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
  if [ -z "$line" ]; then
    tail -40 "$1"
    total_f=$((total_f + 1))
    return
  fi
  echo "$line"
  read -r p f < <(awk '{print $2, $4}' <<<"$line")
  [ "$f" = 0 ] || grep -E 'FAIL|Error|Exception' "$1" | head -30
  total_p=$((total_p + p)); total_f=$((total_f + f))
}

echo "== C host"
FUTOIN_POLYGLOT_LANGS="${langs[*]}" "./$build/tests/polyglot_c_host" \
  >"$work/c.log" 2>&1
tally "$work/c.log"
for lang in "${langs[@]}"; do
  [ -f "bindings/$lang/polyglot.sh" ] || continue
  echo "== $lang host"
  bash "bindings/$lang/polyglot.sh" test >"$work/$lang.test.log" 2>&1
  tally "$work/$lang.test.log"
done
# The README's demo (tests/demo/polyglot/) with the hosts built above: its
# receipt, and the handled error's async stack across Java, Lua and C.
echo "== the polyglot demo"
demo_p=0; demo_f=0
demo_check() { # description, command...
  local what=$1; shift
  if "$@"; then demo_p=$((demo_p + 1)); else demo_f=$((demo_f + 1)); echo "FAIL demo: $what"; fi
}
FUTOIN_POLYGLOT_HOSTS_READY=1 bash tests/demo/polyglot/run.sh "$build" "$work/receipt.txt" \
  >"$work/demo.log" 2>&1
demo_check "the demo exits 0" [ $? = 0 ]
demo_check "the receipt is the expected one" \
  cmp -s "$work/receipt.txt" tests/demo/polyglot/expected_receipt.txt
demo_check "the Python wait was cancelled by the C timeout" \
  grep -q '^\[python\] rate request cancelled' "$work/demo.log"
demo_check "the async stack runs Java -> Lua -> C" \
  bash -c 'grep -A4 "async stack (CreditLimit)" "$1" | tr -d "\n" |
    grep -qE "at java Totals.checkCredit \(Totals.java:[0-9]+\).*at lua pricing.approve.*at c review"' \
    _ "$work/demo.log"
[ $demo_f = 0 ] || tail -40 "$work/demo.log"
echo "polyglot-demo: $demo_p passed, $demo_f failed"
total_p=$((total_p + demo_p)); total_f=$((total_f + demo_f))
[ $status = 0 ] || total_f=$((total_f + 1))
echo "polyglot: $total_p passed, $total_f failed"
[ "$total_f" = 0 ]
