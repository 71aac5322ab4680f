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
host_paths=()

if ! ninja -C "$build" tests/polyglot_c_host tests/libpolyglot_fragments.so \
       >"$work/ninja.log" 2>&1; then
  tail -30 "$work/ninja.log"
  echo "polyglot: 0 passed, 1 failed"
  exit 1
fi
export FUTOIN_POLYGLOT_C_FRAGMENTS=$PWD/$build/tests/libpolyglot_fragments.so

for lang in "${langs[@]}"; do
  script=bindings/$lang/polyglot.sh
  if [ ! -f "$script" ]; then
    echo "polyglot: no $script"
    status=1
    continue
  fi
  if ! bash "$script" build "$work/$lang" >"$work/$lang.env" 2>"$work/$lang.build.log"; then
    echo "polyglot: building the $lang host failed:"
    tail -30 "$work/$lang.build.log"
    status=1
    continue
  fi
  while IFS= read -r line; do
    case "$line" in
      FUTOIN_HOST_PATH_*=*) host_paths+=("${line#*=}") ;;
      [A-Z_]*=*) export "${line?}" ;;
    esac
  done < <(grep -E '^[A-Z_][A-Z0-9_]*=' "$work/$lang.env")
done
FUTOIN_HOST_PATH=$(IFS=:; echo "${host_paths[*]}")
export FUTOIN_HOST_PATH

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
[ $status = 0 ] || total_f=$((total_f + 1))
echo "polyglot: $total_p passed, $total_f failed"
[ "$total_f" = 0 ]
