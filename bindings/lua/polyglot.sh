#!/usr/bin/env bash
# The Lua side of the polyglot matrix (tests/polyglot/README.md).
#
#   bash bindings/lua/polyglot.sh build OUTDIR
#       bindings/lua/build.sh OUTDIR: luarocks --lua-version=5.4 make of the
#       rock into OUTDIR/tree (and the packed .rock): the module,
#       libfutoin_async.so.0 and the host plug-in
#       lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so. Prints
#       the environment the other hosts need, one KEY=VALUE a line:
#         LUA_PATH, LUA_CPATH    the rock tree and tests/polyglot/fragments/lua
#                                (the library finds the plug-in through
#                                LUA_CPATH, as a user's `luarocks path`)
#         FUTOIN_LUA_TREE        the rock tree
#   bash bindings/lua/polyglot.sh test
#       The Lua host's matrix (bindings/lua/tests/polyglot/host_spec.lua,
#       busted under lua5.4): Lua steps with steps of C, Python, Java (and
#       Lua itself, by name) in one flow; then the plug-in in a C program
#       (tests/polyglot/plugin_test.c: clear errors, counters, a restart).
#       Uses the environment above and
#       FUTOIN_POLYGLOT_C_FRAGMENTS, PYTHONPATH, CLASSPATH,
#       FUTOIN_JAVA_CLASSPATH as tests/polyglot/run.sh exports them; run
#       alone, it builds the rock and the C fragments into a temporary
#       folder first. FUTOIN_POLYGLOT_LANGS limits the fragment languages
#       (default "c python java lua"). With python and java among them,
#       Lua steps also run under a Python and a Java host program, on two
#       loop threads each (tests/polyglot/host_threads.py, HostThreads.java,
#       over tests/polyglot/host_steps.lua; FUTOIN_JAVA_POLYGLOT_OUT: the
#       Java package). Then the packed .rock is installed into a tree of its
#       own and its plug-in used by a C program (installed_host.c) and by
#       those two, under `env -i` with only PATH and luarocks' variables
#       (PYTHONPATH for Python): the library finds the plug-in through
#       LUA_CPATH. Last line:
#         polyglot-lua: N passed, M failed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export LC_ALL=C.UTF-8

build() { # outdir
  local out tree
  out=$(mkdir -p "$1" && cd "$1" && pwd)
  tree=$out/tree
  bash "$here/build.sh" "$out" >"$out/build.log" 2>&1 || {
    tail -30 "$out/build.log" >&2
    return 1
  }
  local lib=$tree/lib/lua/5.4 share=$tree/share/lua/5.4
  [ -f "$lib/futoin_async/futoin-hosts/libfutoin_host_lua.so" ] || {
    echo "the rock has no host plug-in" >&2
    return 1
  }
  echo "LUA_PATH=$repo/tests/polyglot/fragments/lua/?.lua;$share/?.lua;$share/?/init.lua;;"
  echo "LUA_CPATH=$lib/?.so;;"
  echo "FUTOIN_LUA_TREE=$tree"
}

alone_tmp=""

# other_host TAG LABEL LOG COMMAND...: a host program of another language
# running Lua steps; its last line "LABEL: N passed, M failed" is added to
# passed/failed (one failure more if it exited non-zero).
other_host() {
  local tag=$1 label=$2 log=$3 rc line p f
  shift 3
  "$@" >"$log" 2>&1
  rc=$?
  grep -v "^$label: " "$log" | sed "s/^/[$tag] /"
  line=$(grep -E "^$label: [0-9]+ passed, [0-9]+ failed\$" "$log" | tail -1)
  p=$(awk '{print $2}' <<<"$line"); f=$(awk '{print $4}' <<<"$line")
  p=${p:-0}; f=${f:-1}
  [ $rc -ne 0 ] && [ "$f" = 0 ] && f=1
  echo "[$tag] $p passed, $f failed"
  passed=$((passed + p)); failed=$((failed + f))
}

# installed_env TREE [NAME=VALUE...] COMMAND...: COMMAND under `env -i`
# with PATH, the NAME=VALUEs, what `luarocks --lua-version=5.4 --tree TREE
# path` sets (LUA_PATH, LUA_CPATH, PATH), the user's module folder
# (tests/polyglot) first in LUA_PATH; the library finds the Lua plug-in
# through LUA_CPATH.
installed_env() {
  local tree=$1
  shift
  local vars=()
  while [[ ${1:-} == [A-Z]*=* ]]; do vars+=("$1"); shift; done
  env -i PATH=/usr/bin:/bin "${vars[@]}" bash -c '
    tree=$1 user=$2; shift 2
    eval "$(luarocks --lua-version=5.4 --tree "$tree" path)"
    export LUA_PATH="$user/?.lua;$LUA_PATH"
    exec "$@"' _ "$tree" "$here/tests/polyglot" "$@"
}

run_test() {
  if [ -z "${FUTOIN_LUA_TREE:-}" ]; then
    # alone: build what the runner would have built
    alone_tmp=$(mktemp -d /tmp/futoin-lua-polyglot.XXXXXX)
    trap 'rm -rf "$alone_tmp"' EXIT
    local tmp=$alone_tmp
    local line
    while IFS= read -r line; do
      case "$line" in
        *=*) export "${line?}" ;;
      esac
    done < <(build "$tmp/lua") || { echo "polyglot-lua: 0 passed, 1 failed"; return 1; }
    if [ -z "${FUTOIN_POLYGLOT_C_FRAGMENTS:-}" ]; then
      local rt=$FUTOIN_LUA_TREE/lib/lua/5.4/futoin_async
      cc -std=c11 -D_GNU_SOURCE -O1 -shared -fPIC -fvisibility=hidden -DFUTOIN_BUILDING_LIBRARY \
        -I "$repo/abi" -o "$tmp/libpolyglot_fragments.so" \
        "$repo/tests/polyglot/fragments/c/polyglot_fragments.c" \
        -L"$rt" -l:libfutoin_async.so.0 -Wl,-rpath,"$rt" || {
        echo "polyglot-lua: 0 passed, 1 failed"; return 1; }
      export FUTOIN_POLYGLOT_C_FRAGMENTS=$tmp/libpolyglot_fragments.so
    fi
  fi
  # the spec's own folder for its helpers; the fragments' for Lua itself
  export LUA_PATH="$here/tests/polyglot/?.lua;$repo/tests/polyglot/fragments/lua/?.lua;${LUA_PATH:-;}"
  local log
  log=$(mktemp /tmp/futoin-lua-polyglot-log.XXXXXX)
  (cd "$here/tests/polyglot" && lua5.4 /usr/bin/busted -o plainTerminal host_spec.lua) >"$log" 2>&1
  local rc=$?
  grep -vE '^[+-]*$' "$log" | tail -80
  local sum passed failed
  sum=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors?' "$log" | tail -1)
  passed=$(awk '{print $1}' <<<"$sum")
  failed=$(awk '{print $4 + $7}' <<<"$sum")
  passed=${passed:-0}; failed=${failed:-0}
  if [ $rc -ne 0 ] && [ "$failed" = 0 ]; then failed=1; fi

  # the plug-in in a C program: clear errors where Lua is started or a step
  # resolved, counters, a restart (tests/polyglot/plugin_test.c)
  local pdir
  pdir=$(mktemp -d /tmp/futoin-lua-plugin.XXXXXX)
  mkdir -p "$pdir/hosts" "$pdir/modules"
  local core
  core=$(dirname "$(find "$FUTOIN_LUA_TREE/lib/lua/5.4/futoin_async" -name 'libfutoin_async.so.0' | head -1)")
  if cp "$FUTOIN_LUA_TREE/lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so" "$pdir/hosts/" \
     && ${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -I"$repo/abi" -I"$repo/tests/include" \
          -o "$pdir/plugin_test" "$here/tests/polyglot/plugin_test.c" \
          -L"$core" -l:libfutoin_async.so.0 -ldl -pthread -Wl,-rpath,"$core" >"$log" 2>&1; then
    other_host plugin polyglot-lua-plugin "$log" env FUTOIN_HOST_PATH="$pdir/hosts" \
      FUTOIN_LUA_PLUGIN="$pdir/hosts/libfutoin_host_lua.so" FUTOIN_LUA_TEST_DIR="$pdir/modules" \
      "$pdir/plugin_test"
  else
    cat "$log"; failed=$((failed + 1))
  fi

  # The rock INSTALLED (issue 23): the packed .rock into a tree of its own,
  # whose plug-in a C program then loads under `env -i` with only PATH and
  # what `eval "$(luarocks --lua-version=5.4 --tree T path)"` sets (the
  # user's module folder put first in LUA_PATH): the library finds it
  # through LUA_CPATH (tests/polyglot/installed_host.c: that plug-in, one
  # libfutoin_async, one libuv). The program is linked to a copy of the
  # core in a folder of no package (no futoin-hosts/ next to it).
  local itree=$pdir/installed-tree rock jh jout jdir langs
  rock=$(ls "$(dirname "$FUTOIN_LUA_TREE")"/futoin_async-*.linux-*.rock 2>/dev/null | head -1)
  mkdir -p "$pdir/core"
  if [ -n "$rock" ] && luarocks --lua-version=5.4 --tree "$itree" install "$rock" >"$log" 2>&1 \
     && cp -L "$core/libfutoin_async.so.0" "$pdir/core/" \
     && ${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -I"$repo/abi" -I"$repo/tests/include" \
          -o "$pdir/installed_host" "$here/tests/polyglot/installed_host.c" \
          -L"$pdir/core" -l:libfutoin_async.so.0 -Wl,-rpath,"$pdir/core" >"$log" 2>&1; then
    # linked to a copy of the core of the `luarocks make` tree, other than
    # the installed tree's, which must not be loaded
    other_host installed polyglot-lua-installed "$log" \
      installed_env "$itree" "$pdir/installed_host" "$pdir/core/libfutoin_async.so.0" "$itree"
  else
    echo "[installed] cannot install ${rock:-the .rock} or build installed_host.c:"
    cat "$log"
    failed=$((failed + 1))
  fi

  # Lua steps under a Python and a Java host program, on two loop threads
  # of each (tests/polyglot/host_threads.py, HostThreads.java): with the
  # matrix's environment, then with the installed rock as above
  langs=" ${FUTOIN_POLYGLOT_LANGS:-c python java lua} "
  if [[ $langs == *" python "* ]]; then
    other_host python lua-under-python "$log" /usr/bin/python3 "$here/tests/polyglot/host_threads.py"
    other_host python-installed lua-under-python "$log" \
      installed_env "$itree" PYTHONPATH="${PYTHONPATH:-}" /usr/bin/python3 "$here/tests/polyglot/host_threads.py"
  fi
  if [[ $langs == *" java "* ]]; then
    jh=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64} jout=${FUTOIN_JAVA_POLYGLOT_OUT:-}
    jdir=$pdir/java
    if [ -n "$jout" ] && "$jh/bin/javac" -encoding UTF-8 --release 17 -Xlint:all -Werror -d "$jdir" \
         -cp "$jout/futoin-async.jar" "$here/tests/polyglot/HostThreads.java" >"$log" 2>&1; then
      other_host java lua-under-java "$log" "$jh/bin/java" -cp "$jout/futoin-async.jar:$jdir" HostThreads
      other_host java-installed lua-under-java "$log" \
        installed_env "$itree" "$jh/bin/java" -cp "$jout/futoin-async.jar:$jdir" HostThreads
    else
      echo "[java] cannot build HostThreads.java (FUTOIN_JAVA_POLYGLOT_OUT='$jout'):"
      cat "$log"
      failed=$((failed + 1))
    fi
  fi
  rm -rf "$pdir"
  rm -f "$log"
  echo "polyglot-lua: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}

case "${1:-}" in
build)
  [ -n "${2:-}" ] || { echo "usage: $0 build OUTDIR" >&2; exit 2; }
  build "$2"
  ;;
test)
  run_test
  ;;
*)
  echo "usage: $0 build OUTDIR | test" >&2
  exit 2
  ;;
esac
