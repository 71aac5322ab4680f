#!/usr/bin/env bash
# The polyglot matrix: every host program (C, Python, Lua, Java, Node.js)
# runs steps of every other language in one flow (tests/polyglot/README.md).
#
#   tests/polyglot/run.sh [BUILD_DIR]
#
# 1. builds the C fragments and the C host program in BUILD_DIR (default
#    build, which must be configured);
# 2. asks each binding to build its language host plug-in, its package and
#    its fragments: `bindings/<lang>/polyglot.sh build OUTDIR` prints the
#    environment the others need, one KEY=VALUE a line: what each
#    ecosystem uses (PYTHONPATH, LUA_CPATH, CLASSPATH), through which the
#    library finds the plug-ins (no FUTOIN_HOST_PATH); the Java plug-in
#    taken out of the jar goes to a cache in the work folder
#    (XDG_CACHE_HOME), not the user's;
# 3. runs each host's matrix with all of that exported:
#    the C host (tests/polyglot/c_host.c), then `bindings/<lang>/polyglot.sh
#    test` for each language, then the Node.js host
#    (bindings/node/polyglot.sh test: a host program only);
# 4. runs the C host's matrix again, with the same plug-ins, built with
#    ASan+UBSan (in BUILD_DIR-asan, the build tests/run_all.sh makes; set
#    up here if missing) and under valgrind memcheck, with suppressions only
#    for the JVM's, CPython's and the dynamic linker's own noise
#    (tests/polyglot/sanitizers/, each entry justified there).
# Each host prints "polyglot-<host>: N passed, M failed" (the checked C
# host runs: polyglot-c-asan, polyglot-c-valgrind); the last line is their
# sum, "polyglot: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
langs=(python lua java)
work=$(mktemp -d "${TMPDIR:-/tmp}/futoin-polyglot.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

if ! ninja -C "$build" tests/polyglot_c_host tests/libpolyglot_fragments.so \
       >"$work/ninja.log" 2>&1; then
  tail -30 "$work/ninja.log"
  echo "polyglot: 0 passed, 1 failed"
  exit 1
fi
export FUTOIN_POLYGLOT_C_FRAGMENTS=$(cd "$build" && pwd)/tests/libpolyglot_fragments.so
export XDG_CACHE_HOME=$work/cache

. tests/polyglot/hosts.sh
futoin_polyglot_hosts "$work" "${langs[@]}" || status=1

total_p=0; total_f=0
tally() { # log
  local line p f
  line=$(grep -E '^polyglot-[a-z-]+: [0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
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
# Node.js: a host program only (no plug-in: Node cannot be started inside
# another host program here, bindings/node/README.md), so it is not among
# the fragment languages above; its matrix adds C, Python, Lua, Java and
# JavaScript-by-name steps to JavaScript flows
if command -v node >/dev/null; then
  echo "== node host"
  FUTOIN_POLYGLOT_BUILD="$PWD/$build" bash bindings/node/polyglot.sh test \
    >"$work/node.test.log" 2>&1
  tally "$work/node.test.log"
else
  echo "FAIL polyglot-node: no node on PATH (.ci/setup installs it)"
  total_f=$((total_f + 1))
fi

# ---- the C host under ASan+UBSan and under valgrind ----------------------
# The same program and the same uninstrumented plug-ins and runtimes
# (CPython, Lua, the JVM); only the C host, libfutoin_async and the C
# fragments are sanitized. Every binding's glue needs libfutoin_async.so.0
# by soname and binds to the one already loaded (the C host checks
# /proc/self/maps: no second copy mapped, each glue mapped; here: the
# runtime mapped is the sanitized one).
#
# checked_run LABEL LOG COMMAND...: the C host's "polyglot-c: N passed, M
# failed" counted under LABEL, plus one failure if it exited non-zero or a
# sanitizer reported anything (the report is shown).
ck_p=0; ck_f=0
checked_run() {
  local label=$1 log=$2 rc line p f
  shift 2
  "$@" >"$log" 2>&1
  rc=$?
  line=$(grep -E '^polyglot-c: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
  p=${p:-0}; f=${f:-0}
  [ "$f" = 0 ] || grep -E '^FAIL' "$log" | head -20
  if [ $rc -ne 0 ] || [ -z "$line" ] \
     || grep -qE 'ERROR: (Address|Leak)Sanitizer|LeakSanitizer has encountered|runtime error:' "$log"; then
    echo "FAIL $label: exit status $rc, report:"
    grep -vE '^(c host x |polyglot-c: )' "$log" | head -60
    f=$((f + 1))
  fi
  ck_p=$((ck_p + p)); ck_f=$((ck_f + f))
}

echo "== C host under ASan+UBSan"
# The ASan build of tests/run_all.sh (same options), or a new one.
asan_build=${build}-asan
ck_p=0; ck_f=0
if { [ -f "$asan_build/build.ninja" ] \
     || meson setup "$asan_build" -Db_sanitize=address,undefined -Db_lundef=false \
          -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debug >"$work/asan.setup.log" 2>&1; } \
   && ninja -C "$asan_build" tests/polyglot_c_host tests/libpolyglot_fragments.so \
        >"$work/asan.ninja.log" 2>&1; then
  # ASAN_OPTIONS, beyond tests/run_all.sh's:
  #  handle_segv=1 (the default, pinned): ASan installs its SIGSEGV handler
  #    but lets the JVM install its own over it; HotSpot needs SIGSEGV for
  #    implicit null checks and safepoint polls (2, or the deprecated
  #    allow_user_segv_handler=0, would make every one an ASan crash).
  #  intercept_tls_get_addr=0: GCC 12's LeakSanitizer takes a JVM thread's
  #    dynamic TLS block for a glibc-2.19-style one, computes a range from a
  #    garbage header and its tracer faults at exit ("Tracer caught signal
  #    11 ... LeakSanitizer has encountered a fatal error", seen with
  #    LSAN_OPTIONS=verbosity=1: "DTLS 5 at 0x0004000002e9-0x0045000013eb");
  #    google/sanitizers#1322 (DTLS_on_tls_get_addr guessing the glibc
  #    layout); GCC 12's libsanitizer predates LLVM's 2024 rework of DTLS
  #    ranges. Without it, dynamic TLS blocks are not scanned as roots: that
  #    can only add false leak reports, never hide one.
  # LSAN_OPTIONS: tests/polyglot/sanitizers/lsan.supp (the JVM's own heap).
  # PYTHONMALLOC=malloc: CPython's documented switch for memory checkers
  #    (Misc/README.valgrind; its sanitizer builds default to it): every
  #    object a malloc block LeakSanitizer can follow, so no suppression is
  #    needed for CPython, and a leaked str/bytes/int is a report (leaked
  #    containers: the allocated-blocks check of the normal run above).
  checked_run polyglot-c-asan "$work/c-asan.log" env \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1:handle_segv=1:intercept_tls_get_addr=0 \
    LSAN_OPTIONS="suppressions=$PWD/tests/polyglot/sanitizers/lsan.supp:print_suppressions=1" \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    PYTHONMALLOC=malloc \
    FUTOIN_POLYGLOT_C_FRAGMENTS="$PWD/$asan_build/tests/libpolyglot_fragments.so" \
    FUTOIN_POLYGLOT_LANGS="${langs[*]}" "./$asan_build/tests/polyglot_c_host"
  # the runtime every glue bound to is the sanitized one
  if grep -qE "^polyglot-c: runtime $PWD/$asan_build/runtime/libfutoin_async\.so" "$work/c-asan.log"; then
    ck_p=$((ck_p + 1))
  else
    echo "FAIL polyglot-c-asan: the runtime mapped is not $asan_build's:"
    grep -E '^polyglot-c: runtime' "$work/c-asan.log"
    ck_f=$((ck_f + 1))
  fi
else
  cat "$work/asan.setup.log" "$work/asan.ninja.log" 2>/dev/null | tail -30
  ck_f=$((ck_f + 1))
fi
echo "polyglot-c-asan: $ck_p passed, $ck_f failed"
total_p=$((total_p + ck_p)); total_f=$((total_f + ck_f))

echo "== C host under valgrind"
# memcheck on the normal build: errors, and definite leaks, are failures
# (--error-exitcode); tests/polyglot/sanitizers/valgrind.supp holds the
# JVM's, CPython's and ld.so's own noise. PYTHONMALLOC=malloc as above
# (with pymalloc, memcheck cannot see Python objects).
# --run-libc-freeres=no: at exit glibc's __libc_freeres frees ld.so's
#    dl_scope_free_list but not the old scope arrays it holds, which then
#    show as "definitely lost" (dl-open.c resize_scopes, dl-deps.c) once a
#    library was dlopen'ed while threads ran (libjvm, the JDK's libraries);
#    without freeres they are still reachable, as they really are.
# Two processes: memcheck describes every error address by walking all
# heap blocks, and the JVM's millions of (suppressed) stack bangs times
# CPython's 50,000 malloc'ed objects made one process take 2.5 minutes.
# Java's run is cut to 1,000 flows: each flow costs about a thousand
# suppressed stack bangs (10,000 flows: 60-75 s here; 1,000: ~30 s, most of
# it starting the JVM); the ASan run above does all 10,000.
ck_p=0; ck_f=0
vg=(valgrind -q --leak-check=full --show-leak-kinds=definite
    --errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=24
    --run-libc-freeres=no --suppressions="$PWD/tests/polyglot/sanitizers/valgrind.supp")
vg_langs=() vg_java=()
for lang in "${langs[@]}"; do
  if [ "$lang" = java ]; then vg_java=(java); else vg_langs+=("$lang"); fi
done
if ! command -v valgrind >/dev/null; then
  echo "FAIL polyglot-c-valgrind: no valgrind (.ci/setup installs it)"
  ck_f=1
else
  if [ ${#vg_langs[@]} -gt 0 ]; then
    checked_run polyglot-c-valgrind "$work/c-valgrind.log" env PYTHONMALLOC=malloc \
      FUTOIN_POLYGLOT_LANGS="${vg_langs[*]}" "${vg[@]}" "./$build/tests/polyglot_c_host"
  fi
  if [ ${#vg_java[@]} -gt 0 ]; then
    checked_run polyglot-c-valgrind "$work/c-valgrind-java.log" env PYTHONMALLOC=malloc \
      FUTOIN_POLYGLOT_LANGS=java FUTOIN_POLYGLOT_MANY=1000 "${vg[@]}" \
      "./$build/tests/polyglot_c_host"
  fi
fi
echo "polyglot-c-valgrind: $ck_p passed, $ck_f failed"
total_p=$((total_p + ck_p)); total_f=$((total_f + ck_f))

# The README's demo (tests/demo/polyglot/) with the hosts built above: its
# receipt, and the handled error's async stack across Java, Lua and C.
echo "== the polyglot demo"
demo_p=0; demo_f=0
demo_check() { # description, command...
  local what=$1; shift
  if "$@"; then demo_p=$((demo_p + 1)); else demo_f=$((demo_f + 1)); echo "FAIL demo: $what"; fi
}
# Its temporary files go to TMPDIR, and are gone when it ends: TMPDIR is an
# empty folder dated 1970 here, whose date changes once something was
# created (and removed) in it.
demo_tmp="$work/demo-tmp"
mkdir -p "$demo_tmp" && touch -d @0 "$demo_tmp"
TMPDIR="$demo_tmp" FUTOIN_POLYGLOT_HOSTS_READY=1 bash tests/demo/polyglot/run.sh \
  "$build" "$work/receipt.txt" >"$work/demo.log" 2>&1
demo_check "the demo exits 0" [ $? = 0 ]
demo_check "the demo used TMPDIR and left nothing in it" \
  bash -c '[ -z "$(ls -A "$1")" ] && [ "$(stat -c %Y "$1")" -gt 0 ]' _ "$demo_tmp"
demo_check "the receipt is the expected one" \
  cmp -s "$work/receipt.txt" tests/demo/polyglot/expected_receipt.txt
demo_check "the Python wait was cancelled by the C timeout" \
  grep -q '^\[python\] rate request cancelled' "$work/demo.log"
demo_check "the async stack runs Java -> Lua -> C" \
  bash -c 'grep -A4 "async stack (CreditLimit)" "$1" | tr -d "\n" |
    grep -qE "at java demo.Totals.checkCredit \(Totals.java:[0-9]+\).*at lua pricing.approve.*at c review"' \
    _ "$work/demo.log"
# Every frame of both printed stacks names its file:line, C's included
# (FUTOIN_ADD() in order_pipeline.c): the C API's "  at LANG FUNCTION
# (FILE:LINE)" lines and the Lua handler's "<TAB>[LANG] FILE:LINE: in
# function ..." lines, at least four of each.
demo_check "every frame of the printed async stacks has its file:line" \
  bash -c 'c=$(sed -n "/async stack (CreditLimit), innermost first:/,/^[^ ]/p" "$1" | grep "^  at ")
    lua=$(sed -n "/^async stack traceback:/,/^[^\t]/p" "$1" | grep -P "^\t")
    [ "$(grep -c . <<<"$c")" -ge 4 ] && [ "$(grep -c . <<<"$lua")" -ge 4 ] &&
    ! grep -vqE "^  at [a-z]+ .+ \([^()]+:[0-9]+\)$" <<<"$c" &&
    ! grep -vqP "^\t\[[a-z]+\] [^ ]+:[0-9]+: in function " <<<"$lua" &&
    grep -qE "^  at c review \(.*order_pipeline\.c:[0-9]+\)$" <<<"$c"' \
    _ "$work/demo.log"
[ $demo_f = 0 ] || tail -40 "$work/demo.log"
echo "polyglot-demo: $demo_p passed, $demo_f failed"
total_p=$((total_p + demo_p)); total_f=$((total_f + demo_f))
[ $status = 0 ] || total_f=$((total_f + 1))
echo "polyglot: $total_p passed, $total_f failed"
[ "$total_f" = 0 ]
