#!/usr/bin/env bash
# Runs the libfutoin_async benchmark suite and its peers; see bench/README.md.
#   bench/run.sh [BUILD_DIR] [--runs N] [--scale F] [--tests a,b] [--impls a,b]
#                [--pin CPU] [--no-build] [--timeout S]
# Uses Debian's /usr/bin/python3 (the chart needs apt's python3-matplotlib).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
exec "$py" "$here/run.py" "$@"
