#!/usr/bin/env bash
# bench/polyglot: steps alternating between C, Python, Lua and Java, beside
# the single-language chains, in one process and one run.
#
#   bench/polyglot/run.sh [RELEASE_BUILD_DIR] [STEPS] [ROUNDS]
#
# RELEASE_BUILD_DIR (default build-release, configured with
# --buildtype=release if missing) provides polyglot_bench and the C
# fragments; the language hosts are built as the test matrix builds them
# (tests/polyglot/hosts.sh). The plug-ins and the Python wheel bundle their
# own libfutoin_async.so.0, but the bench loads the release one first and
# the dynamic linker keeps one library per soname: every step runs on the
# release core.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-release}
steps=${2:-20000}
rounds=${3:-7}
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" bench/polyglot_bench tests/libpolyglot_fragments.so >/dev/null
work=$(mktemp -d /tmp/futoin-polyglot-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
. tests/polyglot/hosts.sh
# the Java plug-in and fragments link against the build given here
FUTOIN_BUILD_DIR=$build futoin_polyglot_hosts "$work" python lua java
export FUTOIN_POLYGLOT_C_FRAGMENTS=$(cd "$build" && pwd)/tests/libpolyglot_fragments.so
"$build/bench/polyglot_bench" "$steps" "$rounds"
