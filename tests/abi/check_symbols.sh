#!/usr/bin/env bash
# The exported symbols, the version script and the FUTOIN_API declarations
# in the public headers must be the same three sets.
# usage: tests/abi/check_symbols.sh BUILD_DIR
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(ls "$build"/runtime/libfutoin_async.so.*.*.* | head -n1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sed 's/@.*//' \
  | grep -v '^FUTOIN_ASYNC_' | sort -u > "$tmp/nm"
sed -n '/global:/,/local:/p' "$src/runtime/futoin_async.map" | grep -o '[a-z_][a-z0-9_]*;' \
  | tr -d ';' | sort -u > "$tmp/map"
shopt -s nullglob
headers=("$src"/abi/futoin/*.h "$src"/abi/futoin/sys/*.h)
# export.h defines the macro itself
headers=("${headers[@]/*export.h/}")
grep -ho '^FUTOIN_API[^(]*(' ${headers[@]} \
  | sed -E 's/.*[ *]([a-z_][a-z0-9_]*)\($/\1/' | sort -u > "$tmp/hdr"
ok=1
if ! diff -u "$tmp/map" "$tmp/nm" > "$tmp/d1"; then echo "symbols: map vs nm -D differ:"; cat "$tmp/d1"; ok=0; fi
if ! diff -u "$tmp/map" "$tmp/hdr" > "$tmp/d2"; then echo "symbols: map vs headers differ:"; cat "$tmp/d2"; ok=0; fi
# every exported symbol carries a version node
if nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRB]$/ {print $3}' | grep -v '^FUTOIN_ASYNC_' | grep -vq '@@FUTOIN_ASYNC_'; then
  echo "symbols: unversioned export"; ok=0
fi
[ $ok = 1 ] && echo "symbols: $(wc -l < "$tmp/map") exported, map = nm -D = headers"
[ $ok = 1 ]
