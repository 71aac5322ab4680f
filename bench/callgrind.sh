#!/usr/bin/env bash
# Instructions per op under callgrind (N vs 2N runs); see bench/README.md.
#   bench/callgrind.sh [BUILD_DIR] [--only a,b] [--python PY] [--lua-tree TREE]
#                      [--java-jar JAR] [--build-bindings] [--no-build]
#                      [--csv FILE]
# Uses Debian's /usr/bin/python3 (standard library only) and valgrind.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
exec "$py" "$here/callgrind.py" "$@"
