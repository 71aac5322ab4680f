#!/usr/bin/env bash
# Java step cost next to CompletableFuture chains, in one JVM run.
#   bench/java/run.sh [BUILD_DIR] [N] [WARMUP] [ROUNDS]
# BUILD_DIR: a release build of the core (default bench/build, the one
# bench/run.sh uses; set up here with --buildtype=release if missing); the
# jar is built against it into BUILD_DIR/java.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/bench/build}
shift || true
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$repo" --buildtype=release >/dev/null
fi
corelib=$(ninja -C "$build" -t targets all | grep -o '^runtime/libfutoin_async\.so\.[0-9.]*[0-9]' | head -1)
ninja -C "$build" -j 2 "$corelib" >/dev/null
bash "$repo/bindings/java/build.sh" "$build" "$build/java" >/dev/null
jar=$build/java/futoin-async.jar
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -d "$out" -cp "$jar" "$here/Bench.java" "$here/JniFloor.java"
cc -O2 -shared -fPIC -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
  -o "$out/libjnifloor.so" "$here/jni_floor.c"
echo "core: $(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; o={x["name"]:x["value"] for x in json.load(sys.stdin)}; print("buildtype=%s optimization=%s" % (o["buildtype"], o["optimization"]))')"
"$JAVA_HOME/bin/java" -Xss8m -Xms1g -Xmn512m -Djnifloor="$out/libjnifloor.so" -cp "$jar:$out" Bench "$@"
