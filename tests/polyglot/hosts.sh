# Sourced by tests/polyglot/run.sh and tests/demo/polyglot/run.sh: builds
# every language's host (its package, its plug-in, its fragments) with
# `bindings/<lang>/polyglot.sh build OUTDIR` and exports the environment
# each prints, one KEY=VALUE a line: the settings each ecosystem uses
# (PYTHONPATH, LUA_PATH/LUA_CPATH, CLASSPATH), through which the library
# finds the plug-ins by itself (futoin/sys/host.h; no FUTOIN_HOST_PATH).
#
#   futoin_polyglot_hosts WORKDIR LANG...
#
# Returns non-zero (after showing the build log's tail) when a host failed
# to build; the hosts that built are exported all the same.

futoin_polyglot_hosts() {
  local work=$1 lang script line rc=0
  shift
  for lang in "$@"; do
    script=bindings/$lang/polyglot.sh
    if [ ! -f "$script" ]; then
      echo "polyglot: no $script" >&2
      rc=1
      continue
    fi
    if ! bash "$script" build "$work/$lang" >"$work/$lang.env" 2>"$work/$lang.build.log"; then
      echo "polyglot: building the $lang host failed:" >&2
      tail -30 "$work/$lang.build.log" >&2
      rc=1
      continue
    fi
    while IFS= read -r line; do
      case "$line" in
        [A-Z_]*=*) export "${line?}" ;;
      esac
    done < <(grep -E '^[A-Z_][A-Z0-9_]*=' "$work/$lang.env")
  done
  return $rc
}
