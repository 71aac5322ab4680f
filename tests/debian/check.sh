#!/usr/bin/env bash
# The Debian packages (debian/): built, checked, and in a throwaway root
# installed and used as a Debian user would.
#   1. the build dependencies are there (as root with apt: installed with
#      `apt-get build-dep`, plus lintian; else a FAIL naming them);
#   2. `dpkg-buildpackage -us -uc -b` in a copy of the checkout (only the
#      files git knows; the core's C tests run in it) makes the five
#      packages: libfutoin-async0, libfutoin-async-dev, python3-futoin-async,
#      lua-futoin-async, libfutoin-async-java;
#   3. debian/libfutoin-async0.symbols names exactly the symbols of
#      runtime/futoin_async.map, each with its version node, and
#      dpkg-gensymbols -c4 (what the build runs) refuses the built library
#      against a symbols file one symbol short;
#   4. lintian: no error (warnings are printed);
#   5. what each package holds: the plug-ins in
#      /usr/lib/<multiarch>/futoin_async/futoin-hosts/ (where the library
#      looks for a system install's), the jar next to the Java plug-in and
#      in /usr/share/maven-repo, no RUNPATH in the Python and Lua modules,
#      no bundled copy of the library;
#   6. only in a throwaway root (`ischroot` says so, e.g. under
#      ../shared/tools/fresh-chroot.sh, or FUTOIN_DEBIAN_INSTALL=1; never on
#      a shared machine, where /usr would shadow other builds): `apt install
#      ./*.deb`, a C program built with pkg-config runs a flow, each
#      language reports the version, and Python, Lua and Java hosts each run
#      a flow with steps of the other two, with no FUTOIN_* or library
#      variable set (the step modules in /usr/local, where a user's own go;
#      CLASSPATH names the Java steps' class folder); then the packages are
#      purged again (also on failure), since the suites after this one test
#      what a user gets without them.
# usage: tests/debian/check.sh
# Last line: debian: N passed, M failed
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/tests/debian
work=$(mktemp -d "${TMPDIR:-/tmp}/futoin-debian.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
finish() { echo "debian: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }
version=$(sed -nE "s/^[[:space:]]*version:[[:space:]]*'([^']+)'.*/\1/p" "$src/meson.build" | head -n1)
packages=(libfutoin-async0 libfutoin-async-dev python3-futoin-async lua-futoin-async libfutoin-async-java)
is_root() { [ "$(id -u)" = 0 ]; }

# 1. build dependencies
if ! command -v dpkg-checkbuilddeps >/dev/null || ! command -v lintian >/dev/null \
   || ! (cd "$src" && dpkg-checkbuilddeps) >"$work/deps.log" 2>&1; then
  if is_root && command -v apt-get >/dev/null; then
    echo "installing the build dependencies (apt-get build-dep) and lintian"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             --no-install-recommends dpkg-dev lintian build-essential \
           && DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq "$src"; } >"$work/apt.log" 2>&1; then
      tail -n 20 "$work/apt.log"
    fi
  fi
fi
if command -v dpkg-checkbuilddeps >/dev/null && command -v lintian >/dev/null \
   && (cd "$src" && dpkg-checkbuilddeps) >"$work/deps.log" 2>&1; then
  ok "build dependencies and lintian present"
else
  cat "$work/deps.log" 2>/dev/null
  command -v lintian >/dev/null || echo "lintian missing"
  bad "build dependencies missing (as root: apt-get build-dep ./ ; .ci/setup installs them)"
  finish
fi

# 2. build, in a copy with only the files git knows (or all but build folders)
tree=$work/futoin-async
mkdir -p "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$tree"
else
  tar -C "$src" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$tree"
fi
start=$(date +%s)
if (cd "$tree" && DEB_BUILD_OPTIONS="parallel=2 ${DEB_BUILD_OPTIONS:-}" \
      dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
  missing=()
  for p in "${packages[@]}"; do
    ls "$work/${p}_${version}_"*.deb >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} = 0 ]; then
    ok "dpkg-buildpackage -us -uc -b: ${packages[*]} ($(( $(date +%s) - start )) s)"
  else
    bad "dpkg-buildpackage made no package for: ${missing[*]}"
  fi
else
  grep -E 'error|Error|ERROR|FAIL' "$work/build.log" | head -20; tail -n 30 "$work/build.log"
  bad "dpkg-buildpackage -us -uc -b failed"
  finish
fi

# 3. the symbols file and the version script agree; dpkg-gensymbols -c4 bites
want=$(awk '
  /^[A-Z_0-9.]+ *\{/ { node = $1; sub(/\{/, "", node); global = 0; next }
  /global:/ { global = 1; next }
  /local:/ { global = 0; next }
  /^\}/ { print " " node "@" node; global = 0; next }
  global && /;/ { s = $1; sub(/;/, "", s); print " " s "@" node }
' "$src/runtime/futoin_async.map" | sort)
have=$(grep -E '^ [A-Za-z_0-9.]+@FUTOIN_ASYNC_' "$src/debian/libfutoin-async0.symbols" | awk '{print " " $1}' | sort)
if [ -n "$want" ] && [ "$want" = "$have" ]; then
  ok "libfutoin-async0.symbols lists the version script's $(wc -l <<<"$want") symbols and nodes, no more"
else
  diff <(echo "$want") <(echo "$have") | head -20
  bad "libfutoin-async0.symbols and runtime/futoin_async.map differ"
fi
pkgdir=$tree/debian/libfutoin-async0
if [ -d "$pkgdir" ]; then
  short=$work/short.symbols
  grep -v ' futoin_tool_trim@' "$src/debian/libfutoin-async0.symbols" >"$short"
  if (cd "$tree" && dpkg-gensymbols -c4 -plibfutoin-async0 -P"$pkgdir" -I"$short" \
        -O"$work/out.symbols") >"$work/gensymbols.log" 2>&1; then
    bad "dpkg-gensymbols -c4 accepted a symbols file without futoin_tool_trim"
  elif grep -q 'futoin_tool_trim' "$work/gensymbols.log"; then
    ok "dpkg-gensymbols -c4 refuses a symbols file one symbol short (futoin_tool_trim)"
  else
    cat "$work/gensymbols.log"; bad "dpkg-gensymbols -c4 failed for another reason"
  fi
else
  bad "no debian/libfutoin-async0 staging folder to check the symbols against"
fi

# 4. lintian
debs=()
for p in "${packages[@]}"; do debs+=("$work/${p}_${version}_"*.deb); done
lintian --tag-display-limit 0 "$work"/*.changes >"$work/lintian.log" 2>&1
grep -E '^[EW]: ' "$work/lintian.log" | sed 's/^/lintian: /'
if grep -q '^E: ' "$work/lintian.log"; then
  bad "lintian reports $(grep -c '^E: ' "$work/lintian.log") errors"
else
  ok "lintian: no errors ($(grep -c '^W: ' "$work/lintian.log") warnings)"
fi

# 5. contents
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
hosts=usr/lib/$ma/futoin_async/futoin-hosts
contents() { dpkg-deb -c "$work/${1}_${version}_"*.deb | awk '{print $6}' | sed 's|^\./||'; }
expect=(
  "libfutoin-async0 usr/lib/$ma/libfutoin_async.so.$version"
  "libfutoin-async-dev usr/lib/$ma/pkgconfig/futoin_async.pc"
  "libfutoin-async-dev usr/lib/$ma/cmake/futoin_async/futoin_asyncConfig.cmake"
  "libfutoin-async-dev usr/include/futoin/async.h"
  "python3-futoin-async $hosts/libfutoin_host_python.so"
  "lua-futoin-async $hosts/libfutoin_host_lua.so"
  "libfutoin-async-java $hosts/libfutoin_host_java.so"
  "libfutoin-async-java $hosts/futoin-async.jar"
  "libfutoin-async-java usr/share/java/futoin-async-$version.jar"
  "libfutoin-async-java usr/share/maven-repo/org/futoin/futoin-async/$version/futoin-async-$version.pom"
  "libfutoin-async-java usr/share/maven-repo/org/futoin/futoin-async/$version/futoin-async-$version.jar"
)
absent=()
for e in "${expect[@]}"; do
  contents "${e%% *}" | grep -qx "${e#* }" || absent+=("${e#* } in ${e%% *}")
done
if [ ${#absent[@]} = 0 ]; then ok "each package holds its files (${#expect[@]} checked)"
else bad "missing: ${absent[*]}"; fi
copies=$(for p in python3-futoin-async lua-futoin-async libfutoin-async-java; do contents "$p"; done \
         | grep -E 'libfutoin_async\.so|/futoin_async/futoin-hosts/' | grep -v "^$hosts/")
if [ -z "$copies" ]; then ok "no bundled copy of the library or of a plug-in in the language packages"
else bad "bundled copies: $copies"; fi
x=$work/x
mkdir -p "$x"
for p in python3-futoin-async lua-futoin-async; do dpkg-deb -x "$work/${p}_${version}_"*.deb "$x"; done
rpaths=$(find "$x" -name '*.so' -exec sh -c 'readelf -d "$1" | grep -E "RPATH|RUNPATH" | sed "s|^|$1: |"' _ {} \;)
if [ -z "$rpaths" ]; then ok "no RPATH/RUNPATH in the Python and Lua modules"
else bad "$rpaths"; fi

# 6. installed, in a throwaway root only
case "${FUTOIN_DEBIAN_INSTALL:-auto}" in
  1) throwaway=1 ;;
  0) throwaway=0 ;;
  *) if command -v ischroot >/dev/null && ischroot; then throwaway=1; else throwaway=0; fi ;;
esac
if [ "$throwaway" != 1 ] || ! is_root; then
  echo "SKIP (not counted): apt install of the packages and the flows with them: not a throwaway root"
  echo "  (run it in one: ../shared/tools/fresh-chroot.sh . \"bash tests/debian/check.sh\")"
  finish
fi
# The root stays throwaway only for this script: the parts of the test
# command after it (polyglot, polyglot-installed) check what a user gets
# WITHOUT these packages, and a system install of the plug-ins would answer
# them instead (a fresh root failed them so). So whatever happens below,
# the packages and the step modules go again on exit, and the last check
# says so.
pysite=$(python3 -c 'import sys; print("/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2])')
uninstall() {
  rm -f "$pysite/deb_steps.py" /usr/local/share/lua/5.4/deb_steps.lua
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >"$work/purge.log" 2>&1
}
finish_installed() {
  uninstall
  left=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null | grep -v '^un ' | grep -v '^$')
  hosts=$(ls /usr/lib/*/futoin_async/futoin-hosts 2>/dev/null)
  if [ -z "$left" ] && [ -z "$hosts" ] && [ ! -e "$pysite/deb_steps.py" ]; then
    ok "purged again: no package, plug-in or step module is left for the suites after this one"
  else
    tail -n 20 "$work/purge.log"; bad "left installed after the check: ${left//$'\n'/; } ${hosts//$'\n'/ }"
  fi
  finish
}
trap 'uninstall; rm -rf "$work"' EXIT
if (cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}") >"$work/install.log" 2>&1; then
  ok "apt install ./*.deb: ${packages[*]}"
else
  tail -n 20 "$work/install.log"; bad "apt install of the packages failed"; finish_installed
fi
# no variable that points anywhere
unset FUTOIN_HOST_PATH LD_LIBRARY_PATH PYTHONPATH LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4 \
      CLASSPATH JAVA_HOME FUTOIN_JAVA_JAR FUTOIN_JAVA_CLASSPATH VIRTUAL_ENV
export HOME=$work/home
mkdir -p "$HOME"
if cc -std=c11 -Wall -Werror -o "$work/consumer" "$src/tests/install/consumer.c" \
      $(pkg-config --cflags --libs futoin_async) 2>"$work/cc.log"; then
  out=$("$work/consumer" 2>&1)
  if grep -qx "consumer got 42" <<<"$out"; then ok "C program built with pkg-config: ${out//$'\n'/; }"
  else bad "C program printed: $out"; fi
else
  cat "$work/cc.log"; bad "C program did not build with pkg-config --cflags --libs futoin_async"
fi
out=$(python3 -c 'import futoin_async; print(futoin_async.__version__)' 2>&1)
[ "$out" = "$version" ] && ok "python3: futoin_async $out" || bad "python3 futoin_async version: $out"
out=$(lua5.4 -e 'print(require("futoin_async")._VERSION)' 2>&1)
[ "$out" = "$version" ] && ok "lua5.4: futoin_async $out" || bad "lua5.4 futoin_async version: $out"
# the step modules where a user's own go
mkdir -p "$pysite" /usr/local/share/lua/5.4 "$work/classes"
cp "$here/steps/deb_steps.py" "$pysite/"
cp "$here/steps/deb_steps.lua" /usr/local/share/lua/5.4/
if javac -d "$work/classes" -cp /usr/share/java/futoin-async.jar "$here/steps/DebSteps.java" 2>"$work/javac.log"; then
  out=$(cd "$work" && java -cp "/usr/share/java/futoin-async.jar:$work/classes" DebSteps 2>&1)
  if grep -qx "java host got 42" <<<"$out" && grep -qx "java futoin-async $version" <<<"$out"; then
    ok "Java host, Python and Lua steps: ${out//$'\n'/; }"
  else bad "Java host printed: $out"; fi
  out=$(cd "$work" && CLASSPATH=$work/classes python3 "$here/steps/host.py" 2>&1)
  if grep -qx "python host got 42" <<<"$out" && grep -qx "python futoin_async $version" <<<"$out"; then
    ok "Python host, Lua and Java steps: ${out//$'\n'/; }"
  else bad "Python host printed: $out"; fi
  out=$(cd "$work" && CLASSPATH=$work/classes lua5.4 "$here/steps/host.lua" 2>&1)
  if grep -qx "lua host got 42" <<<"$out" && grep -qx "lua futoin_async $version" <<<"$out"; then
    ok "Lua host, Java and Python steps: ${out//$'\n'/; }"
  else bad "Lua host printed: $out"; fi
else
  cat "$work/javac.log"; bad "DebSteps.java did not compile against /usr/share/java/futoin-async.jar"
fi
finish_installed
