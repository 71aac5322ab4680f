#!/usr/bin/env bash
# Tests of the Lua binding, against the INSTALLED module:
#
#   bash bindings/lua/test.sh [--no-build] [OUT]  # the rock: build.sh, install, busted
#   bash bindings/lua/test.sh --asan              # glue + runtime under ASan/UBSan
#   bash bindings/lua/test.sh --valgrind          # the suite under valgrind memcheck
#
# Default: build.sh into OUT (default: a temporary folder; --no-build: use
# what build.sh built there before), which does `luarocks --lua-version=5.4
# make` into the tree OUT/tree (tree A: a require check from it),
# `luarocks pack` of that install into a binary .rock in OUT and a source
# rock (.src.rock, built into tree C with the checkout hidden: see below);
# then `luarocks install <file>.rock` into a fresh tree B, and busted
# (Debian's, run by lua5.4) over tests/*_spec.lua with LUA_PATH/LUA_CPATH
# of tree B.
# The last line is "lua: N passed, M failed" (or lua-asan / lua-valgrind).
#
# Environment: LUA_TEST_KEEP=1 keeps the temporary trees; LUA_SPECS limits
# the spec files (e.g. "core_spec.lua spec_spec.lua").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=$here/tests
repo=$(cd "$here/../.." && pwd)
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
mode=rock
case "${1:-}" in --asan|--valgrind) mode=$1; shift ;; esac
out=${1:-}
case "$out" in -*)
  echo "usage: $0 [--no-build] [OUT] | --asan | --valgrind" >&2
  exit 2 ;;
esac
export LC_ALL=C.UTF-8

tmp=$(mktemp -d)
cleanup() { [ -n "${LUA_TEST_KEEP:-}" ] || rm -rf "$tmp"; }
trap cleanup EXIT

fail_setup() { # message log
  echo "lua tests: $1" >&2
  [ -f "$2" ] && tail -40 "$2" >&2
  echo "${label:-lua}: 0 passed, 1 failed"
  exit 1
}

rocks() { luarocks --lua-version=5.4 "$@"; }

# The test-only modules: foreign_as, over tests/foreign/foreign_as.c (a
# foreign FTN12 implementation for fa.wrap()); threads_lua, a loop thread
# of its own adding Lua steps (tests/threads_lua.c).
build_foreign() { # cflags...
  mkdir -p "$tmp/cmod"
  cc -std=c11 -O1 -shared -fPIC -D_POSIX_C_SOURCE=200809L "$@" \
    -I "$repo/abi" -I "$repo/tests/foreign" $(pkg-config --cflags lua5.4) \
    -o "$tmp/cmod/foreign_as.so" "$tests/foreign_lua.c" "$repo/tests/foreign/foreign_as.c" \
    >"$tmp/foreign.log" 2>&1 || fail_setup "building the foreign test module failed" "$tmp/foreign.log"
  cc -std=c11 -O1 -shared -fPIC -D_GNU_SOURCE "$@" \
    -I "$repo/abi" -I "$here/host" $(pkg-config --cflags lua5.4) \
    -o "$tmp/cmod/threads_lua.so" "$tests/threads_lua.c" -ldl -pthread \
    >>"$tmp/foreign.log" 2>&1 || fail_setup "building the threads test module failed" "$tmp/foreign.log"
}

# busted over the specs with the module of tree $1; prints its summary and
# sets passed/failed.
run_busted() { # tree [wrapper...]
  local tree=$1; shift
  local specs=${LUA_SPECS:-$(cd "$tests" && ls *_spec.lua)}
  eval "$(rocks --tree "$tree" path)"
  export LUA_PATH="$tests/?.lua;$LUA_PATH" LUA_CPATH="$tmp/cmod/?.so;$LUA_CPATH"
  export FUTOIN_LUA_TREE="$tree" FUTOIN_EXPECTED_DIR="$repo/tests/expected/"
  (cd "$tests" && "$@" lua5.4 /usr/bin/busted -o plainTerminal $specs) >"$tmp/busted.log" 2>&1
  busted_rc=$?
  local rc=$busted_rc
  grep -vE '^[+-]*$' "$tmp/busted.log" | grep -vE '^==[0-9]+==' | tail -60
  local sum
  sum=$(grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors?' "$tmp/busted.log" | tail -1)
  passed=$(awk '{print $1}' <<<"$sum")
  failed=$(awk '{print $4 + $7}' <<<"$sum")
  passed=${passed:-0}; failed=${failed:-0}
  if [ $rc -ne 0 ] && [ "$failed" = 0 ]; then failed=1; fi
}

case "$mode" in
rock)
  label=lua
  out=${out:-$tmp/out}
  if [ $build = 1 ]; then
    bash "$here/build.sh" "$out" >"$tmp/build.log" 2>&1 \
      || fail_setup "build.sh failed" "$tmp/build.log"
  fi
  rock=$(ls "$out"/futoin_async-*.linux-*.rock 2>/dev/null | head -1)
  [ -n "$rock" ] && [ -d "$out/tree" ] || fail_setup "no .rock and tree in $out (build.sh)" "$tmp/build.log"
  rocks --tree "$tmp/treeB" install "$rock" >"$tmp/install.log" 2>&1 \
    || fail_setup "luarocks install of the .rock failed" "$tmp/install.log"
  # tree A (luarocks make): the module loads and runs a flow from there
  make_ok=0
  cat >"$tmp/make_check.lua" <<'EOF'
local fa = require "futoin_async"
local so = package.searchpath("futoin_async.core", package.cpath)
assert(so:find(arg[1], 1, true) == 1, so)
local r = fa.AsyncSteps(); r:add(function(asi) asi:success(6 * 7) end)
assert(r:run() == 42)
print("luarocks make tree: loads from " .. so)
EOF
  (eval "$(rocks --tree "$out/tree" path)"; cd "$tmp" && lua5.4 make_check.lua "$out/tree") \
    && make_ok=1
  # The source rock builds without the checkout: `luarocks install` of the
  # .src.rock (copied out) into tree C, run from outside the checkout and,
  # where a mount namespace can be had (root), with the checkout's folder
  # hidden under an empty tmpfs; then the module of tree C loads, runs a
  # flow and reports the project's version, and no file of tree C names
  # the checkout.
  src_ok=0
  src_rock=$(ls "$out"/futoin_async-*.src.rock 2>/dev/null | head -1)
  mkdir -p "$tmp/srcrock"
  if [ -n "$src_rock" ] && cp "$src_rock" "$tmp/srcrock/"; then
    src_cmd=(luarocks --lua-version=5.4 --tree "$tmp/treeC" install "$tmp/srcrock/${src_rock##*/}")
    if unshare -m true 2>/dev/null; then
      (cd "$tmp/srcrock" && unshare -m sh -c 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"' \
         _ "$repo" "${src_cmd[@]}") >"$tmp/src-install.log" 2>&1
    else
      (cd "$tmp/srcrock" && "${src_cmd[@]}") >"$tmp/src-install.log" 2>&1
    fi
    src_rc=$?
    top_version=$(sed -n "s/^  version: '\(.*\)',\$/\1/p" "$repo/meson.build" | head -1)
    if [ $src_rc = 0 ] \
       && (eval "$(rocks --tree "$tmp/treeC" path)"; cd "$tmp" && lua5.4 make_check.lua "$tmp/treeC" \
             && lua5.4 - "$top_version" <<<'local fa = require "futoin_async"
               assert(fa._VERSION == arg[1] and fa.version() == arg[1], fa.version())') \
       && ! grep -rlF "$repo" "$tmp/treeC" >"$tmp/src-names-checkout.log"; then
      src_ok=1
      echo "luarocks install of the .src.rock: built and loads from $tmp/treeC"
    else
      echo "lua tests: the .src.rock did not build or load without the checkout" >&2
      tail -30 "$tmp/src-install.log" >&2
      cat "$tmp/src-names-checkout.log" >&2 2>/dev/null
    fi
  fi
  # What is missing is reported before building: luarocks' own check of
  # the rockspec's external_dependencies (libuv, libffi), and the
  # Makefile's of tools and development packages (here: no swig on PATH).
  deps_ok=0
  mkdir -p "$tmp/nobin"
  for t in sh ln pkg-config meson ninja cc; do ln -sf "$(command -v $t)" "$tmp/nobin/$t"; done
  if [ -n "$src_rock" ]; then
    deps_ok=1
    (cd "$tmp/srcrock" && rocks --tree "$tmp/treeD" install "${src_rock##*/}" \
       LIBUV_INCDIR=/nonexistent) >"$tmp/deps-uv.log" 2>&1 && deps_ok=0
    grep -q "Could not find header file for LIBUV" "$tmp/deps-uv.log" || deps_ok=0
    (cd "$tmp/srcrock" && rocks --tree "$tmp/treeD" install "${src_rock##*/}" \
       LIBFFI_LIBDIR=/nonexistent) >"$tmp/deps-ffi.log" 2>&1 && deps_ok=0
    grep -q "Could not find library file for LIBFFI" "$tmp/deps-ffi.log" || deps_ok=0
    make -s -C "$here" check PATH="$tmp/nobin" >"$tmp/deps-tools.log" 2>&1 && deps_ok=0
    grep -q "missing: swig (on Debian: apt-get install" "$tmp/deps-tools.log" || deps_ok=0
  fi
  if [ $deps_ok = 0 ]; then
    echo "lua tests: missing dependencies were not reported before building" >&2
    cat "$tmp"/deps-*.log >&2 2>/dev/null
  fi
  build_foreign
  export FUTOIN_LUA_FORTIFY=1 # a release build: _FORTIFY_SOURCE applies
  export FUTOIN_LUA_ROCK=1     # tree B holds the installed .rock
  run_busted "$tmp/treeB"
  passed=$((passed + make_ok + src_ok + deps_ok)); failed=$((failed + 3 - make_ok - src_ok - deps_ok))
  ;;
--asan)
  label=lua-asan
  # runtime + glue with -fsanitize=address,undefined; lua5.4 itself is not
  # instrumented, so the sanitizer runtimes are preloaded.
  (cd "$here" && make BUILD="$tmp/build-asan" NINJA_JOBS=2 \
     MESON_ARGS="-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug -Dc_args=-fno-sanitize-recover=all" \
     && make BUILD="$tmp/build-asan" INST_LIBDIR="$tmp/treeS/lib/lua/5.4" \
          INST_LUADIR="$tmp/treeS/share/lua/5.4" install) >"$tmp/make.log" 2>&1 \
    || fail_setup "the sanitizer build failed" "$tmp/make.log"
  build_foreign -fsanitize=address,undefined
  libasan=$(gcc -print-file-name=libasan.so)
  libubsan=$(gcc -print-file-name=libubsan.so)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1
  export LSAN_OPTIONS=suppressions=$tests/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export LUA_SPECS=${LUA_SPECS:-"core_spec.lua steps_spec.lua chain_spec.lua misuse_spec.lua policy_spec.lua spec_spec.lua coroutine_spec.lua wait_spec.lua results_spec.lua luv_spec.lua threads_spec.lua leak_spec.lua"}
  export FUTOIN_LEAK_FLOWS=${FUTOIN_LEAK_FLOWS:-20000}
  run_busted "$tmp/treeS" env LD_PRELOAD="$libasan $libubsan"
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp/busted.log"; then
    grep -E -A20 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$tmp/busted.log" | head -60
    failed=$((failed + 1))
  fi
  ;;
--valgrind)
  label=lua-valgrind
  (cd "$here" && make BUILD="$tmp/build-vg" NINJA_JOBS=2 MESON_ARGS="-Dbuildtype=debugoptimized" \
     && make BUILD="$tmp/build-vg" INST_LIBDIR="$tmp/treeV/lib/lua/5.4" \
          INST_LUADIR="$tmp/treeV/share/lua/5.4" install) >"$tmp/make.log" 2>&1 \
    || fail_setup "the valgrind build failed" "$tmp/make.log"
  build_foreign -g
  export FUTOIN_LEAK_FLOWS=${FUTOIN_LEAK_FLOWS:-10000}
  export FUTOIN_LUA_FORTIFY=1 # debugoptimized: _FORTIFY_SOURCE applies
  run_busted "$tmp/treeV" valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --suppressions="$tests/valgrind.supp"
  # memcheck errors (leaks of our code included) make valgrind exit 99:
  # one failure, whatever busted counted
  if grep -qE '==[0-9]+== ' "$tmp/busted.log"; then
    grep -E '==[0-9]+== ' "$tmp/busted.log" | head -60
    [ "$busted_rc" = 99 ] && [ "$failed" = 1 ] && failed=0
    failed=$((failed + 1))
  fi
  ;;
esac

echo "$label: $passed passed, $failed failed"
[ "$failed" = 0 ]
