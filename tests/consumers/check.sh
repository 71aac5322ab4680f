#!/usr/bin/env bash
# How C users take the library, besides pkg-config (tests/install/):
#   1. meson subproject, two ways: the checkout at subprojects/futoin_async
#      with dependency('futoin_async', fallback: 'futoin_async')
#      (tests/consumers/meson/subproject), and a WrapDB-style
#      subprojects/futoin_async.wrap ([wrap-file] over an archive of the
#      checkout, [provide] dependency_names = futoin_async) with a plain
#      dependency('futoin_async') (tests/consumers/meson/wrap). Neither
#      names a variable: the dependency must be the subproject's
#      meson.override_dependency(). The subproject must not pull in
#      Criterion nor define any test, benchmark or target but the library,
#      and the consumer runs;
#   2. CMake: find_package(futoin_async CONFIG) against a `meson install`
#      prefix gives futoin_async::futoin_async; the consumer runs;
#   3. Maven, offline: the jar built here (bindings/java/build.sh over the
#      same core build), written as a repository folder
#      (bindings/java/maven-repo.sh); a Maven project (tests/consumers/maven)
#      depending on org.futoin:futoin-async:VERSION built and run by
#      Debian's `mvn -o` with only Debian's /usr/share/maven-repo for the
#      plug-ins. Missing tools (mvn, the Debian plug-in packages of
#      .ci/setup) are a FAIL, never a skip;
#   4. Java from a fresh clone: `git clone` of HEAD, then
#      `bash bindings/java/build.sh` alone (no build directory yet) builds
#      the jar, and a flow runs on it.
# usage: tests/consumers/check.sh
# Last line: consumers: N passed, M failed
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/tests/consumers
work=$(mktemp -d "${TMPDIR:-/tmp}/futoin-consumers.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

version=$(sed -nE "s/^[[:space:]]*version:[[:space:]]*'([^']+)'.*/\1/p" "$src/meson.build" | head -n1)

# 1. meson, two ways: the checkout as subprojects/futoin_async with
#    dependency('futoin_async', fallback: 'futoin_async'), and the
#    checkout's files as a WrapDB-style wrap with a plain
#    dependency('futoin_async'). Neither names a variable, so both work
#    only through the subproject's meson.override_dependency() (meson
#    says "(overridden)"). --force-fallback-for: never a system copy;
#    --wrap-mode=nodownload: the wrap's archive comes from packagecache/.
meson_consumer() { # label project-dir (meson.build, consumer.c, subprojects/ in it)
  local label=$1 proj=$2 out deps ntests nbench sub
  if ! meson setup "$proj/build" "$proj" --wrap-mode=nodownload --force-fallback-for=futoin_async \
         >"$proj/setup.log" 2>&1 || ! ninja -C "$proj/build" >"$proj/ninja.log" 2>&1; then
    tail -n 20 "$proj/setup.log" "$proj/ninja.log" 2>/dev/null
    bad "meson $label consumer did not build"
    return
  fi
  if grep -qx "Dependency futoin_async found: YES $version (overridden)" "$proj/setup.log"; then
    ok "meson $label: dependency('futoin_async') is the subproject's override_dependency()"
  else
    grep -i 'futoin_async found' "$proj/setup.log"; bad "meson $label: the dependency is not the subproject's override"
  fi
  out=$("$proj/build/consumer" 2>&1)
  if [ $? = 0 ] && grep -qx "consumer got 42" <<<"$out"; then ok "meson $label consumer ran: ${out//$'\n'/; }"
  else bad "meson $label consumer printed: $out"; fi
  deps=$(meson introspect --dependencies "$proj/build")
  if grep -qi criterion <<<"$deps" || grep -qi criterion "$proj/build/meson-logs/meson-log.txt"; then
    bad "meson $label: the subproject looked for Criterion"
  else ok "meson $label: no Criterion in the consumer's build"; fi
  ntests=$(meson introspect --tests "$proj/build" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  nbench=$(meson introspect --benchmarks "$proj/build" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  if [ "$ntests" = 0 ] && [ "$nbench" = 0 ]; then ok "meson $label: the subproject defines no tests and no benchmarks"
  else bad "meson $label: the subproject defines $ntests tests and $nbench benchmarks"; fi
  # the subproject's build targets: the library, nothing of tests/, bench/
  # or bindings/
  sub=$(meson introspect --targets "$proj/build" | python3 -c '
import json, sys
print(" ".join(sorted(t["name"] for t in json.load(sys.stdin) if t["subproject"] == "futoin_async")))')
  if [ "$sub" = futoin_async ]; then ok "meson $label: the subproject's only build target is the library"
  else bad "meson $label: the subproject's build targets are: ${sub:-none}"; fi
}

proj=$work/meson-subproject
mkdir -p "$proj/subprojects"
cp "$here/meson/subproject/meson.build" "$src/tests/install/consumer.c" "$proj/"
ln -s "$src" "$proj/subprojects/futoin_async"
meson_consumer subproject "$proj"

# the wrap's archive: the checkout's files (tracked and new, not ignored)
# as they are now, under futoin_async-VERSION/
proj=$work/meson-wrap
archive=futoin_async-$version.tar.gz
mkdir -p "$proj/subprojects/packagecache"
cp "$here/meson/wrap/meson.build" "$src/tests/install/consumer.c" "$proj/"
if git -C "$src" ls-files -z --cached --others --exclude-standard >"$work/files" \
   && while IFS= read -r -d '' f; do
        if [ -e "$src/$f" ] || [ -L "$src/$f" ]; then printf '%s\0' "$f"; fi
      done <"$work/files" \
      | tar -C "$src" --null -T - --transform "s,^,futoin_async-$version/,S" \
            -czf "$proj/subprojects/packagecache/$archive"; then
  sha=$(sha256sum "$proj/subprojects/packagecache/$archive" | cut -d' ' -f1)
  sed -e "s/@VERSION@/$version/g" -e "s/@SHA256@/$sha/g" "$here/meson/wrap/futoin_async.wrap.in" \
    >"$proj/subprojects/futoin_async.wrap"
  meson_consumer wrap "$proj"
else
  bad "meson wrap: no archive of the checkout (git ls-files, tar)"
fi

# 2. CMake against a meson install
# Only what `meson install` installs is built (the library and the host
# plug-ins, as meson introspect lists them; not the tests and benchmarks),
# then installed without a rebuild.
installed_targets() { # builddir -> the ninja targets meson install installs
  meson introspect --targets "$1" | python3 -c '
import json, os, sys
print("\n".join(os.path.relpath(f, sys.argv[1])
                for t in json.load(sys.stdin) if t["installed"] for f in t["filename"]))' "$1"
}
prefix=$work/prefix
if meson setup "$work/core" "$src" --prefix "$prefix" --libdir lib >"$work/core-setup.log" 2>&1 \
   && mapfile -t targets < <(installed_targets "$work/core") && [ ${#targets[@]} -gt 0 ] \
   && ninja -C "$work/core" "${targets[@]}" >"$work/core-ninja.log" 2>&1 \
   && meson install -C "$work/core" --no-rebuild --quiet >"$work/core-install.log" 2>&1; then
  mkdir -p "$work/cmake"
  cp "$here/cmake/CMakeLists.txt" "$src/tests/install/consumer.c" "$work/cmake/"
  if cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" \
        >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake/build" >>"$work/cmake.log" 2>&1; then
    out=$("$work/cmake/build/consumer" 2>&1)
    if [ $? = 0 ] && grep -qx "consumer got 42" <<<"$out"; then ok "CMake consumer ran: ${out//$'\n'/; }"
    else bad "CMake consumer printed: $out"; fi
  else
    tail -n 20 "$work/cmake.log"; bad "CMake consumer did not build"
  fi
else
  tail -n 20 "$work"/core-*.log; bad "meson install for the CMake consumer failed"
fi

# 3. Maven offline (uses the core build of 2.)
mavenmissing=()
command -v mvn >/dev/null || mavenmissing+=("mvn (Debian: maven)")
for plugin in org/apache/maven/plugins/maven-compiler-plugin/3.10.1 \
              org/apache/maven/plugins/maven-jar-plugin/3.3.0 \
              org/apache/maven/plugins/maven-resources-plugin/3.3.0 \
              org/apache/maven/plugins/maven-surefire-plugin/2.22.3 \
              org/codehaus/mojo/exec-maven-plugin/3.1.0; do
  [ -d "/usr/share/maven-repo/$plugin" ] || mavenmissing+=("/usr/share/maven-repo/$plugin")
done
if [ ${#mavenmissing[@]} -gt 0 ]; then
  bad "Maven consumer not run, missing: ${mavenmissing[*]} (.ci/setup installs them)"
elif [ ! -e "$work/core/build.ninja" ]; then
  bad "Maven consumer not run: no core build"
elif ! bash "$src/bindings/java/build.sh" "$work/core" "$work/java" >"$work/java-build.log" 2>&1 \
     || ! bash "$src/bindings/java/maven-repo.sh" "$work/java" "$work/maven-repo" >>"$work/java-build.log" 2>&1; then
  tail -n 20 "$work/java-build.log"; bad "the jar or its repository folder for the Maven consumer was not built"
else
  mkdir -p "$work/maven"
  cp -r "$here/maven/pom.xml" "$here/maven/settings.xml" "$here/maven/src" "$work/maven/"
  # -o: no network; file:// repositories are allowed (Debian's maven-repo
  # and the folder just written); the local repository is a fresh one
  if (cd "$work/maven" && FUTOIN_MAVEN_REPO=$work/maven-repo \
        mvn -B -o -Daether.offline.protocols=file -s settings.xml \
            -Dmaven.repo.local="$work/m2" verify) >"$work/mvn.log" 2>&1; then
    if grep -qx "maven consumer got 42" "$work/mvn.log" && grep -qx "futoin-async $version" "$work/mvn.log"; then
      ok "Maven consumer (mvn -o verify) ran: maven consumer got 42; futoin-async $version"
    else
      tail -n 20 "$work/mvn.log"; bad "Maven consumer built but did not print its result"
    fi
    got=$work/m2/org/futoin/futoin-async/$version/futoin-async-$version.jar
    if [ -f "$got" ] && cmp -s "$got" "$work/java/futoin-async-$version.jar"; then
      ok "Maven resolved org.futoin:futoin-async:$version from the repository folder (the built jar)"
    else bad "Maven's local repository has no futoin-async-$version.jar equal to the built one"; fi
  else
    grep -E '^\[(ERROR|WARNING)\]' "$work/mvn.log" | head -20; tail -5 "$work/mvn.log"
    bad "mvn -o verify of the Maven consumer failed"
  fi
fi

# 4. the Java binding from a fresh clone (issue 18 §4: build.sh failed
#    there with "cd: .../build: No such file or directory"): a clone of
#    HEAD has no build directory; `bash bindings/java/build.sh` alone must
#    set up the core and build the jar, and the jar alone must run a flow
#    (the Maven consumer's App.java, by the java launcher). What is not
#    committed is not in the clone. ninja runs with -j2 (NINJA, read by
#    meson): the machine is shared.
clone=$work/clone
java=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
printf '#!/bin/sh\nexec ninja -j2 "$@"\n' >"$work/ninja-j2"
chmod +x "$work/ninja-j2"
if ! git clone -q --no-hardlinks "$src" "$clone" >"$work/clone.log" 2>&1; then
  cat "$work/clone.log"; bad "no clone of the checkout"
elif ! (cd "$clone" && NINJA=$work/ninja-j2 bash bindings/java/build.sh) >"$work/clone-java.log" 2>&1; then
  tail -n 20 "$work/clone-java.log"; bad "bash bindings/java/build.sh failed on a fresh clone"
elif [ ! -f "$clone/build/java/futoin-async.jar" ]; then
  bad "bash bindings/java/build.sh on a fresh clone made no build/java/futoin-async.jar"
else
  out=$("$java" -cp "$clone/build/java/futoin-async.jar" "$here/maven/src/main/java/org/example/App.java" 2>&1)
  if [ $? = 0 ] && grep -qx "maven consumer got 42" <<<"$out" && grep -qx "futoin-async $version" <<<"$out"; then
    ok "bash bindings/java/build.sh on a fresh clone: its jar ran a flow: ${out//$'\n'/; }"
  else bad "the fresh clone's jar did not run the flow: $out"; fi
fi

echo "consumers: $pass passed, $fail failed"
[ "$fail" = 0 ]
