#!/usr/bin/env bash
# Every test of the project, in one command (what `.ci/run` runs):
#   1. C suites (Criterion) on a normal build                        (c)
#   2. the same suites under AddressSanitizer + UBSan                 (asan)
#   3. cross-thread calls hammered under ThreadSanitizer (tests/tsan/) (tsan)
#   4. the same suites under valgrind memcheck (leaks are errors)     (valgrind)
#   5. exported symbols = version script = header declarations        (symbols)
#   6. the ABI equals the committed libabigail baseline               (abi)
#   7. `meson install` + a consumer built with pkg-config             (install)
#   7b. the other ways C users take the library: a meson project with it as
#      a subproject directory and as a WrapDB-style wrap, each through its
#      override_dependency() (no Criterion, no test targets), a CMake project with
#      find_package(futoin_async CONFIG) over a meson install, a Maven
#      project offline over the jar's repository folder, and the Java
#      binding's build.sh alone on a fresh clone (consumers)
#   7c. the Debian packages (debian/): dpkg-buildpackage -us -uc -b in a copy,
#      the symbols file against the version script, lintian without
#      errors, each package's files; installed and used only in a
#      throwaway root (tests/debian/check.sh)                        (debian)
#   8. the Python binding: wheel, venv install, pytest                (python)
#   8b. every Python wheel (one per CPython >= 3.11 on the machine): what
#      its ELFs need (only the wheel and glibc), RUNPATH, tags, and install
#      + pytest under each CPython of its version          (python-wheels)
#   9. the Java binding: jar, JUnit 4 (also under -Xcheck:jni), the jar alone
#                                                                     (java)
#  10. the Lua binding: rock (luarocks make, pack, install), busted; the C
#      glue under ASan+UBSan and under valgrind                      (lua)
#  10b. the Node.js binding: the addon (meson build) and lib/, node's
#      built-in test runner over bindings/node/tests/          (node)
#  10c. futoin-asyncsteps' own test suite (npm, es5/test/*test.js, run
#      unmodified with mocha) against the reference (the control) and
#      against the Node.js binding; every test failing here is listed with
#      its reason; three that race the wall clock run apart and do not
#      gate (bindings/node/ri-suite.sh)                        (ri-suite)
#  11. polyglot: every host program (C, Python, Lua, Java, Node.js) runs
#      steps of every language in one flow, and the README's demo is checked
#      (tests/polyglot/run.sh)                                        (polyglot)
#  11b. polyglot from installed packages: .ci/package --reuse (the wheels
#      and the jar of parts 8 and 9), each package installed outside the
#      checkout as its ecosystem does, each host program (C, Python, Lua,
#      Java) running one flow of all four languages under `env -i` with
#      only those ecosystems' settings (tests/polyglot/installed/run.sh)
#                                                      (polyglot-installed)
#  12. every shipped ELF is hardened (RELRO, BIND_NOW, no exec stack, stack
#      protector, FORTIFY): the library and what `meson install` ships, the
#      Python wheel's, the Lua rock's and the Java jar's native code and
#      plug-ins, as parts 1, 8, 9 and 10 built them (tests/abi/)  (hardening)
# Each part ends with a line "<part>: N passed, M failed"; the script exits
# non-zero if anything failed.
#
#   bash tests/run_all.sh                    # every part, in the order above
#   bash tests/run_all.sh --only c,asan      # only these parts (same order)
#   bash tests/run_all.sh --list             # the part names
#
# A part run alone builds what it needs (the normal build for valgrind,
# symbols, abi, install, java and polyglot; every package for
# polyglot-installed); hardening checks what the other parts built, so it
# fails for a binding not built yet.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
export LC_ALL=C.UTF-8
status=0
summary=()
all_parts=(c asan tsan valgrind symbols abi install consumers debian python python-wheels java
           lua node ri-suite polyglot polyglot-installed hardening)

say() { printf '\n==== %s\n' "$*"; }

# Sum Criterion's "Synthesis" lines, and the "<name>: N passed, M failed"
# lines of the non-Criterion test programs (dlopen, ctypes), in a log.
criterion_counts() { # log -> "passed failed"
  awk '/Synthesis: Tested:/ {
         for (i = 1; i <= NF; i++) {
           if ($i == "Passing:") p += $(i+1);
           if ($i == "Failing:") f += $(i+1);
           if ($i == "Crashing:") f += $(i+1);
         }
       }
       /^(dlopen|ctypes|hammer): [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
       END { printf "%d %d\n", p, f }' "$1"
}

record() { # name passed failed
  summary+=("$1: $2 passed, $3 failed")
  [ "$3" = 0 ] || status=1
}
# A few lines saying which test failed, printed again just above the
# summary: CI keeps only the tail of a long run, and a part's own report
# of its failure can be hundreds of lines above it.
failed_digest=()
note_failure() { # part text...
  local part=$1; shift
  local line
  while IFS= read -r line; do
    [ -n "$line" ] && failed_digest+=("$part: $line")
  done <<<"$*"
}

build() { # dir [meson options...]
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
  ninja -C "$dir" >"$dir.ninja.log" 2>&1 || { cat "$dir.ninja.log"; return 1; }
}

# The normal build, for the parts that use it: built by part c, or here
# (once) when that part is not run.
core_built=
need_core() {
  if [ -z "$core_built" ]; then
    if build build; then core_built=ok; else core_built=failed; fi
  fi
  [ "$core_built" = ok ]
}

run_meson_suite() { # name dir
  local name=$1 dir=$2 log
  meson test -C "$dir" --suite c --print-errorlogs --num-processes 2 >"$dir.test.log" 2>&1
  local rc=$?
  log="$dir/meson-logs/testlog.txt"
  grep -E '^ *[0-9]+/[0-9]+ ' "$dir.test.log" || true
  read -r p f < <(criterion_counts "$log")
  # non-Criterion executables (header checks) count one each
  local plain_ok plain_fail
  plain_ok=$(grep -cE '^ *[0-9]+/[0-9]+ headers_[a-z]+ +OK' "$dir.test.log" || true)
  plain_fail=$(grep -cE '^ *[0-9]+/[0-9]+ headers_[a-z]+ +FAIL' "$dir.test.log" || true)
  p=$((p + plain_ok)); f=$((f + plain_fail))
  if [ $rc -ne 0 ]; then
    local failed_runs
    failed_runs=$(grep -E 'FAIL|TIMEOUT' "$dir.test.log")
    if [ "$f" = 0 ]; then
      f=1; [ -z "$failed_runs" ] || head -20 <<<"$failed_runs"
    fi
    sed -n '/Summary of Failures/,$p' "$dir.test.log"
    note_failure "$name" "$(grep -hE '\[(FAIL|----)\]' "$log" | head -8)"
    note_failure "$name" "$(head -4 <<<"$failed_runs")"
  fi
  record "$name" "$p" "$f"
}

part_c() {
  say "C suites (Criterion), normal build"
  if need_core; then run_meson_suite c build; else record c 0 1; fi
}

part_asan() {
  say "C suites under AddressSanitizer + UndefinedBehaviorSanitizer"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  if build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
       -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debug; then
    run_meson_suite asan build-asan
  else
    record asan 0 1
  fi
  unset ASAN_OPTIONS UBSAN_OPTIONS
}

part_tsan() {
  say "Cross-thread calls under ThreadSanitizer"
  # Criterion cannot run under TSan (tests/tsan/threads_hammer.c says why):
  # the hammer is a plain program; any TSan report fails it.
  local tsan_log=build-tsan.hammer.log tsan_rc tp tf
  if { [ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread \
         -Db_lundef=false -Dbuildtype=debug >build-tsan.setup.log 2>&1; } \
     && ninja -C build-tsan tests/threads_hammer >build-tsan.ninja.log 2>&1; then
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./build-tsan/tests/threads_hammer \
      >"$tsan_log" 2>&1
    tsan_rc=$?
    grep -E '^(completions|root ops|host start|hammer):|WARNING: ThreadSanitizer|SUMMARY' "$tsan_log" || true
    read -r tp tf < <(criterion_counts "$tsan_log")
    if [ $tsan_rc -ne 0 ] || grep -q 'ThreadSanitizer' "$tsan_log"; then
      [ "$tf" = 0 ] && tf=1
      sed -n '1,60p' "$tsan_log"
    fi
    record tsan "$tp" "$tf"
  else
    cat build-tsan.setup.log build-tsan.ninja.log 2>/dev/null | tail -30
    record tsan 0 1
  fi
}

part_valgrind() {
  say "C suites under valgrind memcheck"
  local vp=0 vf=0 exe log rc p f dir jobs running=0
  local -a exes=()
  need_core
  # Each Criterion test runs in a child of its own, and valgrind starts
  # afresh in each (about a second apiece: two thirds of this part's time
  # is start-up, not our code). The executables are independent, so they
  # run side by side, as many as there are cores (FUTOIN_VALGRIND_JOBS
  # overrides), and their logs are read in order once all have ended.
  jobs=${FUTOIN_VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}
  [ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
  [ "$jobs" -le 4 ] || jobs=4
  dir=$(mktemp -d)
  for exe in build/tests/test_* build/tests/threads_hammer; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    case "$exe" in *test_alloc|*test_headers_*) continue;; esac
    exes+=("$exe")
    log="$dir/$(basename "$exe")"
    if [ "$running" -ge "$jobs" ]; then
      wait -n
      running=$((running - 1))
    fi
    # --fair-sched=yes: valgrind runs one thread at a time, and its default
    # lock lets a busy thread (a fairness test's spinning loop) keep it
    # while a worker that must complete a step waits; round robin gives
    # every runnable thread its turn.
    ( valgrind -q --fair-sched=yes --trace-children=yes --leak-check=full \
        --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 "$exe" --jobs 1 >"$log" 2>&1
      echo $? >"$log.rc" ) &
    running=$((running + 1))
  done
  wait
  for exe in "${exes[@]}"; do
    log="$dir/$(basename "$exe")"
    rc=$(cat "$log.rc" 2>/dev/null || echo 98)
    read -r p f < <(criterion_counts "$log")
    if [ "$rc" -ne 0 ]; then
      echo "valgrind: $exe exited $rc"; grep -E '==[0-9]+==|FAIL|Assertion' "$log" | head -40
      note_failure valgrind "$(basename "$exe") exited $rc"
      note_failure valgrind "$(grep -E '\[(FAIL|----)\]|==[0-9]+== [A-Z]' "$log" | head -8)"
      [ "$f" = 0 ] && f=1
    else
      echo "valgrind: $(basename "$exe"): $p passed, clean"
    fi
    vp=$((vp + p)); vf=$((vf + f))
  done
  rm -rf "$dir"
  record valgrind "$vp" "$vf"
}

part_symbols() {
  say "exported symbols"
  need_core
  if bash tests/abi/check_symbols.sh build; then record symbols 1 0; else record symbols 0 1; fi
}

part_abi() {
  say "ABI baseline (libabigail)"
  need_core
  if bash tests/abi/check_abi.sh build; then record abi 1 0; else record abi 0 1; fi
}

part_install() {
  say "install + pkg-config consumer"
  need_core
  if bash tests/install/check.sh build; then record install 1 0; else record install 0 1; fi
}

part_consumers() {
  say "consumers: meson subproject and wrap, CMake find_package, Maven offline, Java from a fresh clone"
  local out cp cf
  out=$(bash tests/consumers/check.sh 2>&1)
  echo "$out"
  read -r cp cf < <(awk '/^consumers: [0-9]+ passed/ {print $2, $4}' <<<"$out")
  record consumers "${cp:-0}" "${cf:-1}"
}

part_debian() {
  say "Debian packages: build, symbols, lintian, contents"
  local out dp df
  out=$(bash tests/debian/check.sh 2>&1)
  echo "$out"
  read -r dp df < <(awk '/^debian: [0-9]+ passed/ {print $2, $4}' <<<"$out")
  record debian "${dp:-0}" "${df:-1}"
}

part_python() {
  say "Python binding (wheel, venv, pytest)"
  # bindings/python/test.sh builds the wheel into build/python/ (build.sh:
  # from a copy of the sources, meson-python 0.12 writes into the source
  # dir; the hardening part reads the wheel there), installs it into a venv
  # that sees Debian's pytest, and runs the suite against the installed
  # package; its last line is "python: N passed, M failed".
  local py_log py_rc py_sum pp pf
  py_log=$(mktemp)
  bash bindings/python/test.sh build/python >"$py_log" 2>&1
  py_rc=$?
  grep -vE '^python: [0-9]+ passed, [0-9]+ failed$' "$py_log" | tail -n 40
  py_sum=$(grep -E '^python: [0-9]+ passed, [0-9]+ failed$' "$py_log" | tail -1)
  pp=$(awk '{print $2}' <<<"$py_sum"); pf=$(awk '{print $4}' <<<"$py_sum")
  pp=${pp:-0}; pf=${pf:-1}
  [ $py_rc -ne 0 ] && [ "$pf" = 0 ] && pf=1
  record python "$pp" "$pf"
  rm -f "$py_log"
}

part_python-wheels() {
  say "Python wheels (one per CPython: ELF needs, RUNPATH, tags, install + pytest each)"
  # bindings/python/test.sh --wheels (tests/check_wheels.py) checks every
  # wheel build.sh built into build/python/ (built here if part python did
  # not run); CPythons the machine lacks are named as skipped. Its last line
  # is "python-wheels: N passed, M failed".
  local pw_log pw_rc pw_sum wp wf nb=
  ls build/python/futoin_async-*.whl >/dev/null 2>&1 && nb=--no-build
  pw_log=$(mktemp)
  bash bindings/python/test.sh $nb --wheels build/python >"$pw_log" 2>&1
  pw_rc=$?
  grep -E '^(skipped|FAIL|ok pytest suite)' "$pw_log" || tail -n 40 "$pw_log"
  pw_sum=$(grep -E '^python-wheels: [0-9]+ passed, [0-9]+ failed$' "$pw_log" | tail -1)
  wp=$(awk '{print $2}' <<<"$pw_sum"); wf=$(awk '{print $4}' <<<"$pw_sum")
  wp=${wp:-0}; wf=${wf:-1}
  [ $pw_rc -ne 0 ] && [ "$wf" = 0 ] && wf=1
  record python-wheels "$wp" "$wf"
  rm -f "$pw_log"
}

part_java() {
  say "Java binding (jar, JUnit 4, -Xcheck:jni, the jar alone)"
  # bindings/java/test.sh builds the jar against build/ (soname link), runs
  # the suite twice (normal, -Xcheck:jni) and a demo with only the jar on
  # the class path; its last line is "java: N passed, M failed".
  local java_log java_rc java_sum jp jf
  need_core
  java_log=$(mktemp)
  bash bindings/java/test.sh build build/java >"$java_log" 2>&1
  java_rc=$?
  grep -vE '^\[(junit|xcheck)\] [A-Za-z]+Test +[0-9]+ run, 0 failed' "$java_log" | tail -n 40
  java_sum=$(grep -E '^java: [0-9]+ passed, [0-9]+ failed$' "$java_log" | tail -1)
  jp=$(awk '{print $2}' <<<"$java_sum"); jf=$(awk '{print $4}' <<<"$java_sum")
  jp=${jp:-0}; jf=${jf:-1}
  [ $java_rc -ne 0 ] && [ "$jf" = 0 ] && jf=1
  record java "$jp" "$jf"
  rm -f "$java_log"
}

part_lua() {
  say "Lua binding (rock, busted; ASan+UBSan; valgrind)"
  # bindings/lua/test.sh builds the rock with luarocks (make into one
  # tree, pack, install the .rock into another) and runs the busted suite
  # against the installed module; --asan and --valgrind rebuild the glue and
  # the runtime for the sanitizers / memcheck and run the suite again. Each
  # mode ends with "<mode>: N passed, M failed"; the sum is recorded.
  local lp=0 lf=0 mode lua_log lua_sum p f
  for mode in "" --asan --valgrind; do
    lua_log=$(mktemp)
    bash bindings/lua/test.sh $mode >"$lua_log" 2>&1
    lua_sum=$(grep -E '^lua(-asan|-valgrind)?: [0-9]+ passed, [0-9]+ failed$' "$lua_log" | tail -1)
    if [ -z "$lua_sum" ]; then
      tail -40 "$lua_log"; lf=$((lf + 1))
    else
      echo "$lua_sum"
      read -r p f < <(awk '{print $2, $4}' <<<"$lua_sum")
      [ "$f" = 0 ] || grep -E 'Failure|Error|==[0-9]+==' "$lua_log" | head -30
      lp=$((lp + p)); lf=$((lf + f))
    fi
    rm -f "$lua_log"
  done
  record lua "$lp" "$lf"
}

part_node() {
  say "Node.js binding (N-API addon on Node's loop; node:test)"
  # bindings/node/test.sh builds the addon in the normal build and runs
  # node --test over bindings/node/tests/; last line "node: N passed, M failed".
  local log sum p f
  need_core
  log=$(mktemp)
  bash bindings/node/test.sh >"$log" 2>&1
  sum=$(grep -E '^node: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  if [ -z "$sum" ]; then
    tail -40 "$log"; record node 0 1
  else
    read -r p f < <(awk '{print $2, $4}' <<<"$sum")
    [ "$f" = 0 ] || { grep -E '^not ok' "$log" | head -20; note_failure node "$(grep -E '^not ok' "$log" | head -4)"; }
    echo "$sum"
    record node "$p" "$f"
  fi
  rm -f "$log"
}

part_ri-suite() {
  say "ri-suite: futoin-asyncsteps' own tests, on the reference and on the Node.js binding"
  # bindings/node/ri-suite.sh installs futoin-asyncsteps@2.5.5, mocha and
  # chai from npm (once, into build/node-ri) and prints
  # "ri-suite (reference): P passed, F failed", "ri-suite (futoin): P
  # passed, F failed" and whether each failure here is a listed one. Both
  # count lines go into the summary; the part fails when the reference
  # fails, a test not listed in bindings/node/README.md fails, or a listed
  # one passes.
  local log rc ref ours known
  need_core && ninja -C build -j2 bindings/node/futoin_async.node >/dev/null
  log=$(mktemp)
  bash bindings/node/ri-suite.sh --list >"$log" 2>&1
  rc=$?
  cat "$log"
  ref=$(grep -E '^ri-suite \(reference\): [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  ours=$(grep -E '^ri-suite \(futoin\): [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  summary+=("${ref:-ri-suite (reference): 0 passed, 1 failed}")
  summary+=("${ours:-ri-suite (futoin): 0 passed, 1 failed}")
  # what the failures above are: each listed with its reason, or not
  known=$(grep -E '^ri-suite: [0-9]+ known failures' "$log" | tail -1)
  [ -n "$known" ] && summary+=("$known")
  # the reference's wall-clock tests: their counts, never the status
  local timed
  timed=$(grep -E '^ri-suite wall-clock tests, not gating \((reference|futoin)\): ' "$log" \
            | sed -E 's/^ri-suite wall-clock tests, not gating \((.*)\): /\1 /' | paste -sd';' -)
  [ -n "$timed" ] && summary+=("ri-suite wall-clock tests (not gating, README.md): ${timed//;/; }")
  if [ $rc -ne 0 ] || [ -z "$ref" ] || [ -z "$ours" ]; then
    status=1
    note_failure ri-suite "$(grep -E 'UNEXPECTED|LISTED BUT|npm install failed' "$log" | head -6)"
  fi
  rm -f "$log"
}

part_polyglot() {
  say "polyglot (C, Python, Lua, Java and Node.js hosts; the README's demo)"
  # tests/polyglot/run.sh builds each language's host plug-in and package,
  # runs each host's matrix and the demo; its last line is
  # "polyglot: N passed, M failed".
  local pg_log pg_rc pg_sum gp gf
  need_core
  pg_log=$(mktemp)
  bash tests/polyglot/run.sh build >"$pg_log" 2>&1
  pg_rc=$?
  grep -E '^(== |polyglot-[a-z-]+: |FAIL)' "$pg_log"
  pg_sum=$(grep -E '^polyglot: [0-9]+ passed, [0-9]+ failed$' "$pg_log" | tail -1)
  gp=$(awk '{print $2}' <<<"$pg_sum"); gf=$(awk '{print $4}' <<<"$pg_sum")
  gp=${gp:-0}; gf=${gf:-1}
  if [ $pg_rc -ne 0 ] || [ "$gf" != 0 ]; then
    [ "$gf" = 0 ] && gf=1
    tail -60 "$pg_log"
  fi
  record polyglot "$gp" "$gf"
  rm -f "$pg_log"
}

part_polyglot-installed() {
  say "polyglot from installed packages (.ci/package; the wheel, the rock, the jar, meson install)"
  # tests/polyglot/installed/run.sh --reuse: .ci/package takes the wheels
  # and the jar parts python and java built when they are up to date (else
  # builds them), builds the rocks and the core tarball (meson dist of
  # build/), installs each outside the checkout and runs the 4 hosts x 3
  # languages under env -i; its last line is
  # "polyglot-installed: N passed, M failed".
  local pi_log pi_rc pi_sum ip if_ t0
  need_core
  t0=$SECONDS
  pi_log=$(mktemp)
  bash tests/polyglot/installed/run.sh --reuse >"$pi_log" 2>&1
  pi_rc=$?
  grep -E '^(ok|FAIL|package: the) ' "$pi_log"
  pi_sum=$(grep -E '^polyglot-installed: [0-9]+ passed, [0-9]+ failed$' "$pi_log" | tail -1)
  ip=$(awk '{print $2}' <<<"$pi_sum"); if_=$(awk '{print $4}' <<<"$pi_sum")
  ip=${ip:-0}; if_=${if_:-1}
  if [ $pi_rc -ne 0 ] || [ "$if_" != 0 ]; then
    [ "$if_" = 0 ] && if_=1
    tail -60 "$pi_log"
  fi
  echo "(polyglot-installed took $((SECONDS - t0)) s)"
  record polyglot-installed "$ip" "$if_"
  rm -f "$pi_log"
}

part_hardening() {
  say "hardened ELFs (readelf): the library, the wheel, the rock, the jar, the npm tarball"
  # Every shipped ELF where the parts above built it: what `meson install`
  # of build/ installs, build/python/*.whl, bindings/lua/build-rock/ (the
  # rock's files), build/java/ (the jar and the plug-in next to it). The
  # builds are optimised (debugoptimized, release), so FORTIFY is checked.
  # The check's own self-test (a hardened and a plain probe) counts too.
  local hard_out hp hf sp sf
  need_core
  hard_out=$(bash tests/abi/check_hardening_selftest.sh)
  echo "$hard_out"
  read -r sp sf < <(awk '/^hardening-selftest: [0-9]+ passed/ {print $2, $4}' <<<"$hard_out")
  hard_out=$(bash tests/abi/check_hardening.sh --shipped build --fortify)
  echo "$hard_out"
  read -r hp hf < <(awk '/^hardening: [0-9]+ passed/ {print $2, $4}' <<<"$hard_out")
  record hardening "$(( ${hp:-0} + ${sp:-0} ))" "$(( ${hf:-1} + ${sf:-1} ))"
}

parts=("${all_parts[@]}")
while [ $# -gt 0 ]; do
  case "$1" in
  --only)
    [ $# -ge 2 ] || { echo "run_all: --only needs a list, e.g. --only c,asan" >&2; exit 2; }
    IFS=, read -r -a wanted <<<"$2"
    for w in "${wanted[@]}"; do
      case " ${all_parts[*]} " in
      *" $w "*) ;;
      *) echo "run_all: unknown part '$w' (parts: ${all_parts[*]})" >&2; exit 2 ;;
      esac
    done
    parts=()
    for p in "${all_parts[@]}"; do
      case " ${wanted[*]} " in *" $p "*) parts+=("$p") ;; esac
    done
    shift 2
    ;;
  --list) printf '%s\n' "${all_parts[@]}"; exit 0 ;;
  -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
  *) echo "run_all: unknown argument '$1' (--only PART,..., --list)" >&2; exit 2 ;;
  esac
done

for p in "${parts[@]}"; do
  # where a slow run spent its time (a fresh root took 1,712 s, not 919);
  # the name is kept apart: parts use `p` for their own counts
  part_name=$p part_t0=$SECONDS
  "part_$p"
  echo "(part $part_name took $((SECONDS - part_t0)) s)"
done

if [ ${#failed_digest[@]} -gt 0 ]; then
  say "what failed (each part's report above has the rest)"
  for line in "${failed_digest[@]}"; do echo "$line"; done
fi
say "summary"
for line in "${summary[@]}"; do echo "$line"; done
exit $status
