#!/usr/bin/env bash
# Polyglot from installed packages (issue 23): what `.ci/package` writes,
# installed outside the checkout the way each ecosystem installs it, runs
# ONE flow of all four languages under each host program, with nothing set
# but what those ecosystems set themselves.
#
#   bash tests/polyglot/installed/run.sh [--reuse] [--dist DIR] [--keep]
#
#   --dist DIR  the packages .ci/package wrote into DIR; without it,
#               `.ci/package [--reuse] WORK/dist` first (--reuse: the
#               wheels and the jar the test command built already)
#   --keep      keep the work folder (printed first): the installs, the
#               user's files and each host's log (host-LANG.log)
#
# 1. installs, each into a temporary folder (never the checkout):
#    - the core: the `meson dist` tarball unpacked, `meson setup --prefix
#      PREFIX`, ninja, `meson install` (with the plug-ins it builds, into
#      PREFIX/<libdir>/futoin_async/futoin-hosts/);
#    - the wheel for /usr/bin/python3: `/usr/bin/python3 -m venv VENV`,
#      `VENV/bin/pip install --no-index` of it; the user's Python steps,
#      a package of their own (user/python/: built into a wheel with
#      Debian's python3-build, pip-installed into the venv as well);
#    - the binary rock: `luarocks --lua-version=5.4 --tree ROCKS install`;
#      `luarocks --lua-version=5.4 --tree ROCKS path` gives LUA_PATH and
#      LUA_CPATH, the user's Lua module folder goes first in LUA_PATH;
#    - the jar: copied into a folder; the user's Java class compiled
#      against it, CLASSPATH = the jar and the user's class folder;
#    - C: the user's steps (user/c/user_steps.c) built into a shared
#      object and the C host program (hosts/c_host.c) built with
#      `pkg-config --cflags --libs futoin_async` (PKG_CONFIG_PATH: the
#      prefix's pkgconfig folder) and `-Wl,-rpath,$(pkg-config
#      --variable=libdir futoin_async)`: the rpath to the prefix's libdir
#      a user gives a program of a library outside the system's folders
#      (pkg-config's --libs gives none);
#    and checks that no installed ELF (the prefix's, the venv's
#    futoin_async, the rock tree's, the jar's native code) has a RUNPATH
#    other than $ORIGIN;
# 2. runs each host program under `env -i` with only PATH (the venv's bin
#    and the rock tree's first), VIRTUAL_ENV, HOME, XDG_CACHE_HOME (the
#    jar's plug-in cache, a temporary folder), LUA_PATH, LUA_CPATH and
#    CLASSPATH -- no FUTOIN_HOST_PATH, no LD_LIBRARY_PATH, no file copied by
#    hand -- in the work folder, with the checkout hidden (`unshare -m`, an
#    empty read-only tmpfs mounted over it; where unshare cannot, a note
#    says so and the hosts run with it visible):
#      C       WORK/user/c_host
#      Python  python3 WORK/user/py_host.py       (the venv's python3)
#      Lua     lua5.4 WORK/user/lua_host.lua
#      Java    java JavaHost                     (CLASSPATH)
#    each runs one flow: its own first step, then `append` of the three
#    other languages (a string and an integer passed on, the Python one an
#    `async def` step awaiting asyncio.sleep(0.01)), its check of the
#    values, then each other language's `fail` under a step of its own
#    whose error handler is the host's (code UserError, error_info the
#    language's name). A cell (host, language) passes when the values
#    crossed every language and that language's error reached the host's
#    handler: 4 hosts x 3 languages = 12 cells. Per cell, the async
#    stack the handler read is one stack across the two languages: frame 0
#    the user's `fail` of that language, qualified (user_steps.fail,
#    example.UserSteps.fail) at its file:line, frame 1 the host program's
#    step that added it at the host's file:line (a C step added by name:
#    where its function is defined, from the object's line table, as the
#    user built it with -g). Each
#    process prints the files of libfutoin_async, libuv and the plug-ins
#    it maps (/proc/self/maps); checked per process: one libfutoin_async and one
#    libuv, the library is the package's that loaded first (the prefix's,
#    the venv's wheel's, the rock's, the jar's extracted copy), and every
#    plug-in mapped is its language's package's (none of meson install's);
# 3. the negative checks: the C host with one language's settings left out
#    (no venv, no luarocks path, no CLASSPATH) gets InvalidRequest whose
#    error_info names that package and the command that sets it up; the
#    plug-in that says so is the one meson install put into the prefix
#    (found as the system install's, loaded: checked from the maps).
# Last line: "polyglot-installed: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
repo=$(pwd)
here=$repo/tests/polyglot/installed
export LC_ALL=C.UTF-8
reuse=
dist=
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
  --reuse) reuse=--reuse; shift ;;
  --dist) dist=${2:?--dist needs a folder}; shift 2 ;;
  --keep) keep=1; shift ;;
  *) echo "usage: $0 [--reuse] [--dist DIR] [--keep]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/pg-installed.XXXXXX")
if [ $keep = 1 ]; then
  echo "work folder (kept): $work"
else
  trap 'rm -rf "$work"' EXIT
fi
version=$(sed -nE "s/^[[:space:]]*version:[[:space:]]*'([^']+)'.*/\1/p" meson.build | head -n1)
passed=0
failed=0
ok() { echo "ok $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() {
  echo "polyglot-installed: $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}
# step DESCRIPTION LOG COMMAND...: a set-up step; its failure ends the run
# (one failure, the log's end shown), as nothing after it can run.
step() {
  local what=$1 log=$2
  shift 2
  if "$@" >"$log" 2>&1; then
    echo "set up: $what"
  else
    tail -30 "$log"
    bad "set up: $what"
    finish
  fi
}
home=$work/home
mkdir -p "$home" "$work/cache" "$work/user"
# a clean environment for installing and building, as a user's shell
clean=(env -i "HOME=$home" PATH=/usr/bin:/bin LC_ALL=C.UTF-8)

# ---- 0. the packages ---------------------------------------------------------------------
if [ -z "$dist" ]; then
  dist=$work/dist
  step ".ci/package $reuse" "$work/package.log" bash .ci/package $reuse "$dist"
  grep -E '^(package: the|futoin)' "$work/package.log"
fi
dist=$(cd "$dist" && pwd) || { bad "no folder $dist"; finish; }
if (cd "$dist" && sha256sum --quiet -c SHA256SUMS); then
  ok "the packages match SHA256SUMS"
else
  bad "the packages do not match SHA256SUMS"
fi
cp -r "$here/user/." "$work/user/"
cp "$here/hosts/c_host.c" "$here/hosts/py_host.py" "$here/hosts/lua_host.lua" \
   "$here/hosts/JavaHost.java" "$work/user/"
user=$work/user

# ---- 1. install --------------------------------------------------------------------------
# the core, from its tarball, as a user builds it
prefix=$work/prefix
step "core: tar xf futoin_async-$version.tar.xz" "$work/untar.log" \
  tar -C "$work" -xJf "$dist/futoin_async-$version.tar.xz"
step "core: meson setup --prefix $prefix" "$work/setup.log" \
  "${clean[@]}" meson setup "$work/core" "$work/futoin_async-$version" --prefix "$prefix"
step "core: ninja" "$work/ninja.log" "${clean[@]}" ninja -C "$work/core"
step "core: meson install" "$work/install.log" "${clean[@]}" meson install -C "$work/core" --no-rebuild
pc=$(dirname "$(find "$prefix" -name futoin_async.pc | head -1)")
[ -f "$pc/futoin_async.pc" ] || { bad "meson install wrote no futoin_async.pc"; finish; }
libdir=$("${clean[@]}" PKG_CONFIG_PATH="$pc" pkg-config --variable=libdir futoin_async)

# the wheel for /usr/bin/python3, and the user's package, into a venv
venv=$work/venv
cp=$(/usr/bin/python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$(ls "$dist"/futoin_async-"$version"-"$cp"-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || { bad "no $cp wheel in $dist"; finish; }
step "python: /usr/bin/python3 -m venv" "$work/venv.log" "${clean[@]}" /usr/bin/python3 -m venv "$venv"
step "python: pip install $(basename "$whl")" "$work/pip.log" \
  "${clean[@]}" "$venv/bin/pip" install --no-index "$whl"
step "python: the user's package (python3 -m build, pip install)" "$work/user-pip.log" \
  "${clean[@]}" sh -c '
    /usr/bin/python3 -m build --no-isolation --wheel --outdir "$1/wheel" "$1/python" &&
    "$2/bin/pip" install --no-index "$1"/wheel/user_steps-*.whl' _ "$user" "$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# the rock into a tree of its own
rocks=$work/rocks
rock=$(ls "$dist"/futoin_async-"$version"-*.linux-*.rock 2>/dev/null | head -1)
[ -n "$rock" ] || { bad "no binary rock in $dist"; finish; }
step "lua: luarocks install $(basename "$rock")" "$work/rock.log" \
  "${clean[@]}" luarocks --lua-version=5.4 --tree "$rocks" install "$rock"
# what `eval "$(luarocks --lua-version=5.4 --tree ROCKS path)"` sets
lua_env=$("${clean[@]}" bash -c 'eval "$(luarocks --lua-version=5.4 --tree "$1" path)" &&
  printf "%s\n%s\n%s\n" "$LUA_PATH" "$LUA_CPATH" "$PATH"' _ "$rocks") \
  || { bad "luarocks path failed"; finish; }
{ read -r lua_path; read -r lua_cpath; read -r lua_bin_path; } <<<"$lua_env"

# the jar, copied somewhere; the user's class and the Java host against it
jar=$work/java/futoin-async-$version.jar
mkdir -p "$work/java" "$user/java/classes"
cp "$dist/futoin-async-$version.jar" "$jar"
step "java: javac (the user's class, the host program)" "$work/javac.log" \
  "${clean[@]}" javac -encoding UTF-8 --release 17 -Xlint:all -Werror -cp "$jar" \
  -d "$user/java/classes" "$user/java/example/UserSteps.java" "$user/JavaHost.java"

# C: the user's steps and the host program, with pkg-config
step "c: the user's steps and c_host, with pkg-config" "$work/cc.log" \
  "${clean[@]}" PKG_CONFIG_PATH="$pc" sh -c '
    set -e
    cc -std=c11 -O2 -g -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags futoin_async) \
      -o "$1/c/libuser_steps.so" "$1/c/user_steps.c"
    cc -std=c11 -O2 -Wall -Wextra -Werror $(pkg-config --cflags futoin_async) \
      -o "$1/c_host" "$1/c_host.c" $(pkg-config --libs futoin_async) \
      -Wl,-rpath,"$(pkg-config --variable=libdir futoin_async)"' _ "$user"
csteps=$user/c/libuser_steps.so

# ---- 2. the hosts ------------------------------------------------------------------------
# the settings of an activated venv, of `luarocks path` (+ the user's Lua
# folder), of CLASSPATH (the jar + the user's classes)
full=(HOME="$home" XDG_CACHE_HOME="$work/cache" VIRTUAL_ENV="$venv"
      PATH="$venv/bin:$lua_bin_path"
      LUA_PATH="$user/lua/?.lua;$lua_path" LUA_CPATH="$lua_cpath"
      CLASSPATH="$jar:$user/java/classes")
echo "environment of every host program (env -i):"
printf '  %s\n' "${full[@]}"

# Nothing installed names the checkout: no RUNPATH/RPATH of an installed
# ELF (the prefix, the venv's futoin_async, the rock tree, the jar's
# native code) leads out of its own package.
mkdir -p "$work/jar"
/usr/bin/python3 -m zipfile -e "$jar" "$work/jar"
runpaths=$(find "$prefix" "$site/futoin_async" "$rocks" "$work/jar" -type f -name '*.so*' \
  -exec sh -c 'for f; do readelf -d "$f" 2>/dev/null | sed -nE "s|.*R(UN)?PATH.*\[(.*)\]|$f: \2|p"; done' _ {} + \
  | grep -vE ': \$ORIGIN$')
if [ -z "$runpaths" ]; then
  ok "no installed ELF has a RUNPATH but \$ORIGIN"
else
  bad "installed ELFs with a RUNPATH other than \$ORIGIN:"
  echo "$runpaths"
fi

# hidden COMMAND...: runs COMMAND with an empty read-only tmpfs over the
# checkout (a mount namespace of its own, `unshare -m`, root only), so a
# file of the checkout cannot be used even by a path compiled in; where
# that cannot be had, runs it as it is (the reason printed once).
hidden_ok=0
if unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && ! [ -e "$1/meson.build" ]' _ "$repo" \
     2>/dev/null; then
  hidden_ok=1
  echo "the host programs run with the checkout $repo hidden (unshare -m, an empty tmpfs over it)"
else
  echo "note: the checkout is not hidden from the host programs (unshare -m needs root and CAP_SYS_ADMIN)"
fi
hidden() {
  if [ $hidden_ok = 1 ]; then
    unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' _ "$repo" "$@"
  else
    "$@"
  fi
}

# the file of each language's plug-in in its package
plugin_of() { # language -> a glob of the plug-in's file as its package installs it
  case $1 in
  python) echo "$site/futoin_async/futoin-hosts/libfutoin_host_python.so" ;;
  lua) echo "$rocks/lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so" ;;
  java) echo "$work/cache/futoin_async/libfutoin_host_java-*.so" ;;
  esac
}

# Where each language's step of the flow was written: the `fail` step of
# the user's package (frame 0 of its error's async stack) and the host
# program's step that added it (frame 1).
user_frame() { # language -> "FUNCTION FILE"
  case $1 in
  c) echo "fail user_steps.c" ;;
  python) echo "user_steps.fail user_steps.py" ;;
  lua) echo "user_steps.fail user_steps.lua" ;;
  java) echo "example.UserSteps.fail UserSteps.java" ;;
  esac
}
host_file() { # language -> the host program's file
  case $1 in
  c) echo c_host.c ;; python) echo py_host.py ;; lua) echo lua_host.lua ;; java) echo JavaHost.java ;;
  esac
}

# async_stack HOST LANG LOG: the async stack LANG's error had in HOST's
# handler ("frame HOST LANG I LANGUAGE FUNCTION FILE LINE" lines) is one
# stack across the two languages: frame 0 LANG's user step, qualified, at
# its file:line; frame 1 the host's step that added it, at the host
# program's file:line. A C step added by name (a shared object and a bare
# function) is where its function is defined (the object's line table:
# runtime/adapter/host_c.c, base/codeinfo.c); the user's object has -g.
async_stack() {
  local name=$1 lang=$2 log=$3 f0 f1 want
  f0=$(grep -E "^frame $name $lang 0 " "$log" | cut -d' ' -f5-)
  f1=$(grep -E "^frame $name $lang 1 " "$log" | cut -d' ' -f5-)
  want=$(user_frame "$lang")
  read -r -a a0 <<<"$f0"
  read -r -a a1 <<<"$f1"
  local inner=0 outer=0
  if [ "${a0[0]:-}" = "$lang" ] && [ "${a0[*]:1:2}" = "$want" ] && [ "${a0[3]:-0}" -gt 0 ]; then
    inner=1
  fi
  if [ "${a1[0]:-}" = "$name" ] && [ "${a1[2]:-}" = "$(host_file "$name")" ] \
     && [ "${a1[3]:-0}" -gt 0 ]; then
    outer=1
  fi
  if [ $inner = 1 ] && [ $outer = 1 ]; then
    ok "async stack $name host x $lang: [$f0] < [$f1]"
    return
  fi
  bad "async stack $name host x $lang: [$f0] < [$f1], expected [$lang $want LINE] < [$name ... $(host_file "$name") LINE]"
}

# host NAME CORE_GLOB COMMAND...: runs one host program; counts its three
# cells and the checks of what it maps
host() {
  local name=$1 core=$2 log rc lang line cores uvs f
  log=$work/host-$name.log
  shift 2
  echo "== $name host: $*"
  (cd "$user" && hidden env -i "${full[@]}" "$@") >"$log" 2>&1
  rc=$?
  grep -E '^(trail|cell|map|unhandled) ' "$log" | sed 's/^/  /'
  for lang in c python lua java; do
    [ "$lang" = "$name" ] && continue
    line=$(grep -E "^cell $name $lang " "$log" | head -1)
    case "$line" in
    "cell $name $lang ok") ok "cell $name host x $lang" ;;
    "") bad "cell $name host x $lang: no result (exit status $rc)" ;;
    *) bad "cell $name host x $lang: ${line#cell $name $lang }" ;;
    esac
  done
  for lang in c python lua java; do
    [ "$lang" = "$name" ] || async_stack "$name" "$lang" "$log"
  done
  if [ "$rc" != 0 ]; then
    bad "$name host: exit status $rc"
    grep -vE '^(trail|cell|map) ' "$log" | tail -30
  fi
  cores=$(grep -E '^map .*/libfutoin_async[^/]*$' "$log" | sort -u)
  uvs=$(grep -E '^map .*/libuv[.-][^/]*$' "$log" | sort -u)
  if [ "$(grep -c . <<<"$cores")" = 1 ] && [ "$(grep -c . <<<"$uvs")" = 1 ]; then
    ok "$name host maps one libfutoin_async and one libuv"
  else
    bad "$name host maps $(grep -c . <<<"$cores") libfutoin_async and $(grep -c . <<<"$uvs") libuv files"
  fi
  # shellcheck disable=SC2053  # a glob on purpose
  if [[ ${cores#map } == $core ]]; then
    ok "$name host's libfutoin_async is its package's: ${cores#map }"
  else
    bad "$name host's libfutoin_async is ${cores#map }, not $core"
  fi
  local wrong=""
  for lang in python lua java; do
    [ "$lang" = "$name" ] && continue
    f=$(grep -E "^map .*/libfutoin_host_${lang}[^/]*\.so$" "$log" | head -1)
    # shellcheck disable=SC2053
    [[ ${f#map } == $(plugin_of "$lang") ]] || wrong="$wrong $lang:'${f#map }'"
  done
  if [ -z "$wrong" ]; then
    ok "$name host's plug-ins are their packages'"
  else
    bad "$name host's plug-ins not their packages':$wrong"
  fi
}

host c "$libdir/libfutoin_async.so*" ./c_host
host python "$site/futoin_async/libfutoin_async.so.0" python3 py_host.py "$csteps"
host lua "$rocks/lib/lua/5.4/futoin_async/libfutoin_async.so.0" lua5.4 lua_host.lua "$csteps"
host java "/*/futoin-async-*/libfutoin_async.so.0 (deleted)" java JavaHost "$csteps"

# ---- 3. a language whose package is not set up --------------------------------------------
# missing LANG PATTERN... : the C host without LANG's settings; its step
# fails with InvalidRequest whose error_info holds every PATTERN (fixed
# strings)
missing() {
  local lang=$1 log line p miss=""
  log=$work/missing-$lang.log
  shift
  local env=() kv
  for kv in "${full[@]}"; do
    case "$lang:$kv" in
    python:VIRTUAL_ENV=*) ;;
    python:PATH=*) env+=("PATH=$lua_bin_path") ;;
    lua:LUA_PATH=* | lua:LUA_CPATH=*) ;;
    lua:PATH=*) env+=("PATH=$venv/bin:/usr/bin:/bin") ;;
    java:CLASSPATH=*) ;;
    *) env+=("$kv") ;;
    esac
  done
  (cd "$user" && hidden env -i "${env[@]}" ./c_host --missing "$lang") >"$log" 2>&1
  line=$(grep -E "^missing $lang " "$log" | head -1)
  echo "  ${line:0:600}"
  for p in "InvalidRequest:" "$@"; do
    grep -qF -- "$p" <<<"$line" || miss="$miss '$p'"
  done
  if [ -n "$line" ] && [ -z "$miss" ]; then
    ok "without its settings, a $lang step's error names its package and command"
  else
    bad "without its settings, a $lang step's error lacks:$miss"
    tail -20 "$log"
  fi
  # the one that said so: the plug-in meson install put into the prefix
  if grep -qxF "map $libdir/futoin_async/futoin-hosts/libfutoin_host_$lang.so" "$log"; then
    ok "meson install's $lang plug-in was found and loaded"
  else
    bad "meson install's $lang plug-in was not loaded:"
    grep '^map ' "$log"
  fi
}
echo "== the C host, one language's package not set up"
missing python "cannot import futoin_async" "install the wheel for CPython" \
  "-m venv VENV && VENV/bin/pip install futoin_async-*-$cp-*.whl && . VENV/bin/activate"
missing lua "luarocks --lua-version=5.4 install futoin_async" \
  'eval "$(luarocks --lua-version=5.4 path)"'
missing java "nothing on the JVM's class path" "put futoin-async.jar on CLASSPATH"
finish
