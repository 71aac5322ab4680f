#!/usr/bin/env bash
# The polyglot demo (tests/demo/polyglot/README.md): builds the Python
# wheel, the Lua rock and the Java jar with their host plug-ins
# (bindings/<lang>/polyglot.sh build), compiles the demo's Java class, and
# runs the C program whose one flow goes through all four languages.
#
#   tests/demo/polyglot/run.sh [BUILD_DIR] [RECEIPT_FILE]
#
# BUILD_DIR (default build) is a configured meson build of the repository.
# When the hosts are already built and their environment exported (as
# tests/polyglot/run.sh does before it checks this demo), set
# FUTOIN_POLYGLOT_HOSTS_READY=1 to skip building them again.
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
receipt=${2:-}
here=tests/demo/polyglot
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
work=$(mktemp -d "${TMPDIR:-/tmp}/futoin-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

ninja -C "$build" tests/futoin_polyglot_demo >"$work/ninja.log" 2>&1 || {
  tail -30 "$work/ninja.log"; exit 1; }
if [ -z "${FUTOIN_POLYGLOT_HOSTS_READY:-}" ]; then
  echo "building the language hosts (wheel, rock, jar) ..."
  . tests/polyglot/hosts.sh
  futoin_polyglot_hosts "$work" python lua java
fi

mkdir -p "$work/demo-classes"
"$JAVA_HOME/bin/javac" -encoding UTF-8 --release 17 -d "$work/demo-classes" \
  -cp "$FUTOIN_JAVA_POLYGLOT_OUT/futoin-async.jar" "$here/demo/Totals.java"
export FUTOIN_JAVA_CLASSPATH="$work/demo-classes${FUTOIN_JAVA_CLASSPATH:+:$FUTOIN_JAVA_CLASSPATH}"
export PYTHONPATH="$PWD/$here${PYTHONPATH:+:$PYTHONPATH}"
export LUA_PATH="$PWD/$here/?.lua;${LUA_PATH:-;}"
echo
# not exec: the EXIT trap must still remove $work (the hosts built there)
"$build/tests/futoin_polyglot_demo" ${receipt:+"$receipt"}
