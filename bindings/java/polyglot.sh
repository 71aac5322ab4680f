#!/usr/bin/env bash
# The Java part of the polyglot matrix (issue 14, tests/polyglot/run.sh):
#
#   bindings/java/polyglot.sh build [OUTDIR] [CORE_BUILD_DIR]
#       builds the binding (bindings/java/build.sh: futoin-async.jar and the
#       host plug-in libfutoin_host_java.so, both in OUTDIR), the Java
#       fragments (tests/polyglot/fragments/java -> OUTDIR/fragments) and
#       the Java host test (bindings/java/tests/polyglot -> OUTDIR/host-test;
#       its planted/ -> OUTDIR/planted and OUTDIR/planted.jar, a step class
#       the tests plant where the plug-in must not look);
#       prints the environment the other hosts need, one VAR=value a line:
#         CLASSPATH=OUTDIR/futoin-async.jar   (where the library finds the
#                                              Java plug-in: the jar's entry)
#         FUTOIN_JAVA_CLASSPATH=OUTDIR/fragments  (the plug-in adds the jar)
#         FUTOIN_JAVA_POLYGLOT_OUT=OUTDIR     (where `test` finds the build)
#   bindings/java/polyglot.sh test [OUTDIR]
#       runs the Java host test (org.futoin.polyglot.JavaHost) with the
#       environment the runner set (PYTHONPATH, LUA_PATH, LUA_CPATH, which
#       the library finds the other plug-ins through, FUTOIN_HOST_PATH,
#       FUTOIN_POLYGLOT_C_FRAGMENTS, FUTOIN_POLYGLOT_LANGS),
#       once plain and once under -Xcheck:jni, then the plug-in in a C
#       program (bindings/java/tests/polyglot/plugin_test.c: clear errors
#       where a Java step is resolved, no JVM, counters), Java steps in a
#       Python and a Lua program's flows using that program's loop
#       (tests/polyglot/hosted_timers.py, .lua; when FUTOIN_POLYGLOT_LANGS,
#       default "c python lua", names them), then the plug-in
#       out of the jar in a C program under `env -i` with only PATH,
#       JAVA_HOME, CLASSPATH and XDG_CACHE_HOME (installed_test.c), also
#       from a current folder where a step class is planted (issue 23 item
#       7: not loaded from there nor behind relative or empty CLASSPATH
#       entries); last line "polyglot-java: N passed, M failed".
#
# OUTDIR defaults to $FUTOIN_JAVA_POLYGLOT_OUT, else build/java-polyglot;
# CORE_BUILD_DIR to $FUTOIN_BUILD_DIR, else build (a meson build of the
# repository).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
cmd=${1:-}
out=${2:-${FUTOIN_JAVA_POLYGLOT_OUT:-$repo/build/java-polyglot}}

case "$cmd" in
build)
  set -e
  core=${3:-${FUTOIN_BUILD_DIR:-$repo/build}}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  bash "$here/build.sh" "$core" "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
  rm -rf "$out/fragments" "$out/host-test" "$out/planted" "$out/planted.jar"
  mkdir -p "$out/fragments" "$out/host-test" "$out/planted"
  "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Werror -d "$out/fragments" -cp "$out/futoin-async.jar" \
    $(find "$repo/tests/polyglot/fragments/java" -name '*.java')
  "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Werror -d "$out/host-test" -cp "$out/futoin-async.jar" \
    $(find "$here/tests/polyglot" -path "$here/tests/polyglot/planted" -prune -o -name '*.java' -print)
  "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Werror -d "$out/planted" -cp "$out/futoin-async.jar" \
    $(find "$here/tests/polyglot/planted" -name '*.java')
  "$JAVA_HOME/bin/jar" cf "$out/planted.jar" -C "$out/planted" .
  core=$(cd "$core" && pwd)
  ${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Wno-unused-parameter -I"$repo/abi" -I"$repo/tests/include" \
    -o "$out/plugin_test" "$here/tests/polyglot/plugin_test.c" \
    -L"$core/runtime" -l:libfutoin_async.so.0 -ldl -lpthread -Wl,-rpath,"$core/runtime"
  ${CC:-cc} -std=c11 -D_GNU_SOURCE -DFJ_PLATFORM="\"linux-$(uname -m)\"" -O1 -g -Wall -Wextra \
    -Wno-unused-parameter -I"$repo/abi" -I"$repo/tests/include" -I"$here/host" -I"$repo/runtime/adapter" \
    -o "$out/installed_test" "$here/tests/polyglot/installed_test.c" "$repo/runtime/adapter/zip_entry.c" \
    -L"$core/runtime" -l:libfutoin_async.so.0 -ldl -lpthread -Wl,-rpath,"$core/runtime"
  echo "CLASSPATH=$out/futoin-async.jar"
  echo "FUTOIN_JAVA_CLASSPATH=$out/fragments"
  echo "FUTOIN_JAVA_POLYGLOT_OUT=$out"
  ;;
test)
  out=$(cd "$out" && pwd) || { echo "polyglot-java: 0 passed, 1 failed"; exit 1; }
  # the Java program is the host: the binding registers the "java" host;
  # C, Python and Lua come in through their plug-ins (found by the library)
  cp="$out/futoin-async.jar:$out/fragments:$out/host-test"
  passed=0; failed=0
  # tally LABEL SUMMARY LOG RC: shows LOG (but its "SUMMARY: N passed, M
  # failed" line) under [LABEL] and counts that line; a missing line or a
  # non-zero exit status RC with nothing failed counts as one failure
  tally() {
    local label=$1 summary=$2 log=$3 rc=$4 line p f
    grep -v "^$summary: " "$log" | sed "s|^|[$label] |"
    line=$(grep -E "^$summary: [0-9]+ passed, [0-9]+ failed\$" "$log" | tail -1)
    p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
    p=${p:-0}; f=${f:-1}
    [ "$rc" -ne 0 ] && [ "$f" = 0 ] && f=1
    echo "[$label] $p passed, $f failed"
    passed=$((passed + p)); failed=$((failed + f))
  }
  for mode in plain xcheck; do
    opts=()
    [ $mode = xcheck ] && opts=(-Xcheck:jni)
    log="$out/host-$mode.log"
    "$JAVA_HOME/bin/java" "${opts[@]}" -cp "$cp" org.futoin.polyglot.JavaHost >"$log" 2>&1
    rc=$?
    grep -v '^polyglot-java: ' "$log" | sed "s/^/[$mode] /"
    line=$(grep -E '^polyglot-java: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
    p=${p:-0}; f=${f:-1}
    [ $rc -ne 0 ] && [ "$f" = 0 ] && f=1
    if [ $mode = xcheck ] && grep -q WARNING "$log"; then
      echo "[xcheck] -Xcheck:jni printed warnings"; f=$((f + 1))
    fi
    passed=$((passed + p)); failed=$((failed + f))
  done
  # the plug-in in a C program: clear errors where a Java step is resolved
  # (the library finds the plug-in in the jar on CLASSPATH)
  log="$out/plugin-test.log"
  CLASSPATH="$out/futoin-async.jar${CLASSPATH:+:$CLASSPATH}" \
  FUTOIN_JAVA_CLASSPATH="$out/fragments:$out/host-test" "$out/plugin_test" >"$log" 2>&1
  tally plugin polyglot-java-plugin "$log" $?
  # Java steps in Python's and Lua's flows: asi.tool() is their loop and
  # its timers run (the C program above checked the same)
  langs=${FUTOIN_POLYGLOT_LANGS:-c python lua}
  for host in python lua; do
    case " $langs " in *" $host "*) ;; *) continue ;; esac
    log="$out/java-in-$host.log"
    if [ $host = python ]; then
      CLASSPATH="$out/futoin-async.jar:$out/host-test" /usr/bin/python3 "$here/tests/polyglot/hosted_timers.py" >"$log" 2>&1
    else
      CLASSPATH="$out/futoin-async.jar:$out/host-test" lua5.4 "$here/tests/polyglot/hosted_timers.lua" >"$log" 2>&1
    fi
    tally "java in $host" "java-in-$host" "$log" $?
  done
  # the plug-in as the jar carries it, in a C program that has nothing but
  # PATH, JAVA_HOME, CLASSPATH and XDG_CACHE_HOME (env -i): the library
  # takes the jar's stored plug-in entry out into XDG_CACHE_HOME (a
  # temporary folder here) and loads it; the plug-in finds the JVM and
  # its class path from those settings alone
  jar=$out/futoin-async.jar frag=$out/fragments ht=$out/host-test
  inst=$(mktemp -d "${TMPDIR:-/tmp}/futoin-java-installed.XXXXXX")
  mkdir -p "$inst/bin" "$inst/lib" "$inst/cache"
  ln -s "$(readlink -f "$JAVA_HOME/bin/java")" "$inst/bin/java"
  cp "$jar" "$inst/lib/futoin-async.jar"
  installed() { # label, env assignments..., --, installed_test arguments...
    # (run in the folder $run_in when set)
    local label=$1 envs=() log="$out/installed.log"
    shift
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    (cd "${run_in:-.}" && exec env -i XDG_CACHE_HOME="$inst/cache" "${envs[@]}" "$out/installed_test" "$@") \
      >"$log" 2>&1
    tally "installed: $label" polyglot-java-installed "$log" $?
  }
  # java on PATH (Debian's /usr/bin/java, links resolved); relative and
  # empty CLASSPATH entries are not followed
  installed "java on PATH" PATH=/usr/bin:/bin "CLASSPATH=$jar:$frag:$ht:relative/classes::" -- \
    "$jar" ok "$jar:$frag:$ht"
  # java on PATH is a link to a JDK elsewhere; the jar through dir/*
  installed "a linked java, lib/*" "PATH=$inst/bin" "CLASSPATH=$frag:$inst/lib/*:$ht" -- \
    "$jar" ok "$inst/lib/futoin-async.jar:$frag:$ht"
  # JAVA_HOME, and no java on PATH
  installed "JAVA_HOME" "JAVA_HOME=$JAVA_HOME" PATH=/nonexistent "CLASSPATH=$jar:$frag:$ht" -- \
    "$jar" ok "$jar:$frag:$ht"
  # no JVM to be had: the error says what to set
  installed "no JVM" PATH=/nonexistent "CLASSPATH=$jar:$frag" -- \
    "$jar" fail "or set JAVA_HOME"
  # the jar not on CLASSPATH: the error says to put it there
  installed "no jar" PATH=/usr/bin:/bin "CLASSPATH=$frag:$ht" -- \
    "$jar" fail "put futoin-async.jar on CLASSPATH"
  # a step class planted in the program's current folder, and behind
  # relative CLASSPATH entries (issue 23 item 7): an empty entry (leading,
  # in the middle, trailing), ".", a relative folder, jar and dir/* are
  # left out, so the step is not found, and the error names what was
  # left out; one run each, from that folder, so that any one of them
  # followed would find it. Behind the absolute path of the same folders,
  # it runs.
  cwd=$inst/cwd planted=org.futoin.planted.Planted
  nc="no class '$planted' on the class path" left="relative or empty CLASSPATH entries left out: "
  mkdir -p "$cwd/classes" "$cwd/lib"
  cp -r "$out/planted/." "$cwd/"
  cp -r "$out/planted/." "$cwd/classes/"
  cp "$out/planted.jar" "$cwd/lib/"
  run_in=$cwd installed "planted, an empty entry" PATH=/usr/bin:/bin "CLASSPATH=$jar::$ht" -- \
    -m $planted "$jar" fail "$nc" "$left''"
  run_in=$cwd installed "planted, leading and trailing ':'" PATH=/usr/bin:/bin "CLASSPATH=:$jar:" -- \
    -m $planted "$jar" fail "$nc" "$left''"
  run_in=$cwd installed "planted, '.'" PATH=/usr/bin:/bin "CLASSPATH=.:$jar" -- \
    -m $planted "$jar" fail "$nc" "$left'.'"
  run_in=$cwd installed "planted, a relative folder" PATH=/usr/bin:/bin "CLASSPATH=$jar:classes" -- \
    -m $planted "$jar" fail "$nc" "$left'classes'"
  run_in=$cwd installed "planted, a relative jar" PATH=/usr/bin:/bin "CLASSPATH=$jar:lib/planted.jar" -- \
    -m $planted "$jar" fail "$nc" "$left'lib/planted.jar'"
  run_in=$cwd installed "planted, a relative dir/*" PATH=/usr/bin:/bin "CLASSPATH=$jar:lib/*" -- \
    -m $planted "$jar" fail "$nc" "$left'lib/*'"
  run_in=$cwd installed "planted, the folder's absolute path" PATH=/usr/bin:/bin "CLASSPATH=$jar:$ht:$cwd" -- \
    -m $planted "$jar" ok "$jar:$ht:$cwd"
  run_in=$cwd installed "planted, an absolute folder" PATH=/usr/bin:/bin "CLASSPATH=$jar:$ht:$cwd/classes" -- \
    -m $planted "$jar" ok "$jar:$ht:$cwd/classes"
  run_in=$cwd installed "planted, an absolute dir/*" PATH=/usr/bin:/bin "CLASSPATH=$jar:$ht:$cwd/lib/*" -- \
    -m $planted "$jar" ok "$jar:$ht:$cwd/lib/planted.jar"
  # the development overrides follow the same rule: a relative
  # FUTOIN_JAVA_CLASSPATH entry or FUTOIN_JAVA_JAR is left out and named
  run_in=$cwd installed "planted, a relative FUTOIN_JAVA_CLASSPATH" PATH=/usr/bin:/bin \
    "CLASSPATH=$jar:$ht" "FUTOIN_JAVA_CLASSPATH=classes::lib/planted.jar" -- \
    -m $planted "$jar" fail "$nc" "relative or empty FUTOIN_JAVA_CLASSPATH entries left out: 'classes', '', 'lib/planted.jar'"
  run_in=$cwd installed "planted, a relative FUTOIN_JAVA_JAR" PATH=/usr/bin:/bin \
    "CLASSPATH=$jar:$ht" "FUTOIN_JAVA_JAR=lib/planted.jar" -- \
    -m $planted "$jar" fail "$nc" "FUTOIN_JAVA_JAR 'lib/planted.jar' left out: not an absolute path"
  # the plug-in found without its jar (FUTOIN_HOST_PATH: a folder holding
  # the plug-in alone) and no absolute CLASSPATH entry: the class path is
  # empty, which the JVM takes for the current folder, where the binding's
  # classes and the step class are planted; the JVM is not started so
  bare=$inst/bare
  mkdir -p "$inst/hosts" "$bare"
  cp "$out/libfutoin_host_java.so" "$inst/hosts/"
  unzip -qo "$jar" -d "$bare"
  cp -r "$out/planted/." "$bare/"
  run_in=$bare installed "planted with the binding, nothing on the class path" PATH=/usr/bin:/bin \
    "FUTOIN_HOST_PATH=$inst/hosts" "CLASSPATH=." -- \
    -m $planted "$jar" fail "nothing on the JVM's class path: put futoin-async.jar on CLASSPATH" \
    "relative or empty CLASSPATH entries left out: '.'"
  rm -rf "$inst"
  echo "polyglot-java: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  ;;
*)
  echo "usage: $0 build [OUTDIR] [CORE_BUILD_DIR] | test [OUTDIR]" >&2
  exit 2
  ;;
esac
