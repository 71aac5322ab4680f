#!/usr/bin/env bash
# Builds the Java binding with Debian's JDK 17 and nothing from the network:
#   1. SWIG (-java, C mode) generates the JNI layer from futoin_java.i
#   2. gen/gen_errors.c generates Errors.java from FUTOIN_ERROR_MAP
#   3. the C glue + SWIG output -> libfutoin_java.so, linked against the
#      core library (build/runtime/libfutoin_async.so.0) by soname, rpath $ORIGIN;
#      the host plug-in libfutoin_host_java.so (polyglot flows, src/host_plugin.c)
#   4. javac; futoin-async.jar with both .so files under /native/linux-x86_64/
#      and the POM under META-INF/maven/; the POM also next to the jar; the
#      javadoc jar (doclint warnings are errors)
#   5. the JUnit tests (junit4 + hamcrest from /usr/share/java)
#
# usage: bindings/java/build.sh [CORE_BUILD_DIR] [OUT_DIR]
#   CORE_BUILD_DIR  a meson build of the repository (default: build)
#   OUT_DIR         where everything goes (default: CORE_BUILD_DIR/java)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
core=$(cd "${1:-$repo/build}" && pwd)
out=${2:-$core/java}
mkdir -p "$out"
out=$(cd "$out" && pwd)
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
CC=${CC:-cc}
version=0.1.0
platform=linux-$(uname -m)

corelib="$core/runtime/libfutoin_async.so.0"
if [ ! -e "$corelib" ]; then
  echo "build.sh: $corelib missing: run 'meson setup build && ninja -C build' first" >&2
  exit 1
fi

rm -rf "$out/gen" "$out/classes" "$out/test-classes" "$out/native"
mkdir -p "$out/gen/java/org/futoin/async" "$out/gen/c" "$out/classes" \
         "$out/test-classes" "$out/native/$platform"

# 1. SWIG
swig -java -DSWIGWORDSIZE64 -I"$repo/abi" -I"$here/src" \
  -package org.futoin.async -outdir "$out/gen/java/org/futoin/async" \
  -o "$out/gen/c/futoin_java_wrap.c" "$here/futoin_java.i"

# 2. Errors.java from the one X-macro list
$CC -std=c11 -Wall -I"$repo/abi" "$here/gen/gen_errors.c" -o "$out/gen/gen_errors"
"$out/gen/gen_errors" >"$out/gen/java/org/futoin/async/Errors.java"

# 3. libfutoin_java.so: only the core's exported API, by soname
cflags=(-std=c11 -O2 -g -fPIC -fvisibility=hidden -D_POSIX_C_SOURCE=200809L
        -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
        -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" -I"$repo/abi" -I"$here/src")
$CC "${cflags[@]}" -shared -o "$out/native/$platform/libfutoin_java.so" \
  "$out/gen/c/futoin_java_wrap.c" "$here"/src/jni_*.c \
  -L"$core/runtime" -l:libfutoin_async.so.0 -luv -lpthread \
  -Wl,-z,defs -Wl,-soname,libfutoin_java.so -Wl,-rpath,'$ORIGIN'
cp -L "$corelib" "$out/native/$platform/libfutoin_async.so.0"
# 3b. the host plug-in libfutoin_host_java.so (next to the jar it puts on
#     the class path of the JVM it starts): links neither the JVM nor the
#     runtime, both are in the process already or dlopen()ed
$CC "${cflags[@]}" -shared -o "$out/libfutoin_host_java.so" "$here/src/host_plugin.c" \
  -ldl -lpthread -Wl,-z,defs -Wl,-soname,libfutoin_host_java.so

# 4. classes and the jar
find "$here/java" "$out/gen/java" -name '*.java' >"$out/gen/sources.txt"
"$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Xlint:-serial -Werror -d "$out/classes" @"$out/gen/sources.txt"
mkdir -p "$out/classes/native/$platform" "$out/classes/META-INF/maven/org.futoin/futoin-async"
cp "$out/native/$platform"/*.so* "$out/classes/native/$platform/"
cp "$here/pom.xml" "$out/classes/META-INF/maven/org.futoin/futoin-async/pom.xml"
printf 'groupId=org.futoin\nartifactId=futoin-async\nversion=%s\n' "$version" \
  >"$out/classes/META-INF/maven/org.futoin/futoin-async/pom.properties"
cat >"$out/gen/MANIFEST.MF" <<EOF
Automatic-Module-Name: org.futoin.async
Implementation-Title: futoin-async
Implementation-Version: $version
EOF
rm -f "$out/futoin-async.jar"
"$JAVA_HOME/bin/jar" --create --file "$out/futoin-async.jar" --manifest "$out/gen/MANIFEST.MF" \
  -C "$out/classes" .
cp "$out/futoin-async.jar" "$out/futoin-async-$version.jar"
cp "$here/pom.xml" "$out/futoin-async-$version.pom"
# the API docs (every public name documented: doclint warnings are errors)
rm -rf "$out/javadoc"
"$JAVA_HOME/bin/javadoc" -encoding UTF-8 -docencoding UTF-8 -charset UTF-8 -quiet -Werror -Xdoclint:all -d "$out/javadoc" \
  -sourcepath "$here/java:$out/gen/java" org.futoin.async >"$out/gen/javadoc.log" 2>&1 \
  || { cat "$out/gen/javadoc.log"; exit 1; }
"$JAVA_HOME/bin/jar" --create --file "$out/futoin-async-$version-javadoc.jar" -C "$out/javadoc" .

# 5. tests
junit=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
find "$here/tests" -name '*.java' >"$out/gen/tests.txt"
"$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Xlint:-serial -d "$out/test-classes" \
  -cp "$out/futoin-async.jar:$junit" @"$out/gen/tests.txt"

echo "java: built $out/futoin-async.jar ($(du -k "$out/futoin-async.jar" | cut -f1) KiB)"
