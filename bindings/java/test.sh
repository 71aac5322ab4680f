#!/usr/bin/env bash
# The Java binding's tests, as tests/run_all.sh runs them:
#   1. the JUnit 4 suite (RunAll: every test class, then a summary line)
#   2. the same suite under -Xcheck:jni; any "WARNING" in its output fails
#   3. the jar on its own: a temporary directory with nothing but
#      futoin-async.jar and a compiled demo (app.jar), no library path:
#      `java -cp futoin-async.jar:app.jar App` must print the result
#   3b. the jar is the named module org.futoin.async (jar --describe-module)
#      and works on the module path: a program in a named module of its own
#      (tests/module) and a class-path program with the jar on the module path
#   4. the host plug-in is in the jar as a STORED entry (unzip -v), and
#      the plug-in's zip reader reads it back as the file next to the jar
#      (zip_test: also fuzzes the reader; built with ASan and UBSan)
#   5. the native libraries (libfutoin_java.so in the jar, the host plug-in
#      libfutoin_host_java.so) are hardened as the runtime is:
#      tests/abi/check_hardening.sh --fortify on each
# Ends with "java: N passed, M failed" (each JUnit test counts once per run,
# the jar check once, the module checks once each, the stored entry once, each zip_test check once, each
# library once). Builds first (build.sh: also the
# core, on a fresh clone) unless --no-build.
#
# usage: bindings/java/test.sh [--no-build] [CORE_BUILD_DIR] [OUT_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
core=${1:-$repo/build}
out=${2:-$core/java}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
java=$JAVA_HOME/bin/java

if [ $build = 1 ]; then
  bash "$here/build.sh" "$core" "$out" || { echo "java: 0 passed, 1 failed"; exit 1; }
fi
out=$(cd "$out" && pwd)
cp="$out/futoin-async.jar:$out/test-classes:/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar"
props=(-Dfutoin.expected="$repo/tests/expected" -Dfutoin.meson="$repo/meson.build")
passed=0; failed=0

suite() { # label, extra JVM options...
  local label=$1; shift
  local log="$out/junit-$label.log"
  "$java" "$@" "${props[@]}" -cp "$cp" org.futoin.async.RunAll >"$log" 2>&1
  local rc=$?
  grep -vE '^\s+at (org\.junit|java\.base|jdk\.internal)' "$log" | grep -v '^java: ' | sed "s/^/[$label] /"
  local line p f
  line=$(grep -E '^java: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
  p=${p:-0}; f=${f:-1}
  [ $rc -ne 0 ] && [ "$f" = 0 ] && f=1
  if [ "$label" = xcheck ] && grep -q WARNING "$log"; then
    echo "[xcheck] -Xcheck:jni printed warnings:"; grep -n WARNING "$log" | head -20
    f=$((f + 1))
  fi
  passed=$((passed + p)); failed=$((failed + f))
}

suite junit
suite xcheck -Xcheck:jni

# 3. the jar alone
tmp=$(mktemp -d)
mkdir -p "$tmp/app"
if "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -d "$tmp/app" -cp "$out/futoin-async.jar" "$here/examples/App.java" \
   && "$JAVA_HOME/bin/jar" --create --file "$tmp/app.jar" -C "$tmp/app" . ; then
  cp "$out/futoin-async.jar" "$tmp/"
  rm -rf "$tmp/app"
  got=$(cd "$tmp" && env -u LD_LIBRARY_PATH -u CLASSPATH "$java" -cp futoin-async.jar:app.jar App 2>&1)
  left=$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'futoin-async-*' -newer "$tmp/app.jar" 2>/dev/null | wc -l)
  if [ "$got" = "result: NotImplemented / answer is 42" ] && [ "$left" = 0 ]; then
    echo "[jar] java -cp futoin-async.jar:app.jar App -> $got"
    passed=$((passed + 1))
  else
    echo "[jar] FAIL: output '$got', extracted dirs left behind: $left"
    failed=$((failed + 1))
  fi
else
  echo "[jar] FAIL: demo did not compile"
  failed=$((failed + 1))
fi
rm -rf "$tmp"

# 3b. the jar as the named module org.futoin.async: its descriptor
#     (jar --describe-module), a program in a named module of its own on
#     the module path (tests/module), and a class-path program with the
#     jar on the module path
desc=$("$JAVA_HOME/bin/jar" --describe-module --file "$out/futoin-async.jar" 2>&1)
if grep -q '^org\.futoin\.async jar:' <<<"$desc" && grep -qx 'exports org.futoin.async' <<<"$desc" \
   && [ "$(grep -c '^requires' <<<"$desc")" = 1 ] && grep -qx 'requires java.base mandated' <<<"$desc"; then
  echo "[module] jar --describe-module: org.futoin.async, exports org.futoin.async, requires java.base"
  passed=$((passed + 1))
else
  echo "[module] FAIL: jar --describe-module says:"; sed 's/^/[module] /' <<<"$desc"
  failed=$((failed + 1))
fi
tmp=$(mktemp -d)
if "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Werror -d "$tmp/demo" \
     -p "$out/futoin-async.jar" $(find "$here/tests/module" -name '*.java') 2>"$tmp/javac.log"; then
  got=$(cd "$tmp" && env -u LD_LIBRARY_PATH -u CLASSPATH "$java" -p "$out/futoin-async.jar:$tmp/demo" -m demo/demo.Main 2>&1)
  if [[ "$got" == "result: 42 in module demo with module org.futoin.async" ]]; then
    echo "[module] java -p futoin-async.jar:demo -m demo/demo.Main -> $got"
    passed=$((passed + 1))
  else
    echo "[module] FAIL: the named module demo printed: $got"
    failed=$((failed + 1))
  fi
else
  echo "[module] FAIL: tests/module did not compile:"; sed 's/^/[module] /' "$tmp/javac.log"
  failed=$((failed + 1))
fi
mkdir -p "$tmp/app"
if "$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -d "$tmp/app" -cp "$out/futoin-async.jar" "$here/examples/App.java"; then
  got=$(cd "$tmp" && env -u LD_LIBRARY_PATH -u CLASSPATH "$java" -p "$out/futoin-async.jar" \
        --add-modules org.futoin.async -cp app App 2>&1)
  if [ "$got" = "result: NotImplemented / answer is 42" ]; then
    echo "[module] java -p futoin-async.jar --add-modules org.futoin.async -cp app App -> $got"
    passed=$((passed + 1))
  else
    echo "[module] FAIL: App with the jar on the module path printed: $got"
    failed=$((failed + 1))
  fi
else
  echo "[module] FAIL: App did not compile"
  failed=$((failed + 1))
fi
rm -rf "$tmp"

# 4. the plug-in in the jar: a STORED entry (unzip -v says "Stored"), read
#    back by the plug-in's zip reader with nothing but the central
#    directory: the very file built next to the jar (zip_test, which also
#    fuzzes the reader with truncated and garbage zips)
entry="native/linux-$(uname -m)/futoin-hosts/libfutoin_host_java.so"
listing=$(unzip -v "$out/futoin-async.jar" 2>&1)
if grep -qE "^ *[0-9]+ +Stored .* $entry\$" <<<"$listing"; then
  echo "[zip] unzip -v: $entry is stored"
  passed=$((passed + 1))
else
  echo "[zip] FAIL: $entry is not a stored entry of futoin-async.jar:"
  grep -E 'futoin-hosts|Method' <<<"$listing" | sed 's/^/[zip] /'
  failed=$((failed + 1))
fi
"$out/test-classes/zip_test" "$out/futoin-async.jar" "$out/libfutoin_host_java.so" >"$out/zip-test.log" 2>&1
rc=$?
grep -v '^zip: ' "$out/zip-test.log" | sed 's/^/[zip] /'
line=$(grep -E '^zip: [0-9]+ passed, [0-9]+ failed$' "$out/zip-test.log" | tail -1)
p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
p=${p:-0}; f=${f:-1}
[ $rc -ne 0 ] && [ "$f" = 0 ] && f=1
echo "[zip] zip_test: $p passed, $f failed"
passed=$((passed + p)); failed=$((failed + f))

# 5. hardening of the native libraries
for lib in "$out/native/linux-$(uname -m)/libfutoin_java.so" "$out/libfutoin_host_java.so"; do
  if bash "$repo/tests/abi/check_hardening.sh" "$lib" --fortify >"$out/hardening.log" 2>&1; then
    echo "[hardening] $(basename "$lib"): $(tail -n1 "$out/hardening.log")"
    passed=$((passed + 1))
  else
    echo "[hardening] FAIL $(basename "$lib"):"; sed 's/^/[hardening] /' "$out/hardening.log"
    failed=$((failed + 1))
  fi
done

echo "java: $passed passed, $failed failed"
[ "$failed" = 0 ]
