#!/usr/bin/env bash
# The test command's suites, each run several times in a row on a loaded
# machine: two CPU hogs (`sh -c 'while :; do :; done'`) spin for the whole
# run, so a test that only passes on an idle machine (a wall-clock
# deadline, a sleep used for ordering, a race) shows up here.
#
#   bash tests/stress/under_load.sh [--runs N] [--suite NAME[,NAME...]]...
#
#   --runs N    runs per suite, one after another (default 5)
#   --suite     the suites to run (default: every part of tests/run_all.sh,
#               `bash tests/run_all.sh --list`); may be given several times
#   --hogs N    CPU hogs (default 2)
#   --keep-logs keep every run's log (the folder is printed); by default
#               only the logs of failed runs are kept
#
# Each run is `bash tests/run_all.sh --only NAME`; it passes if it exits 0
# and its summary line says "NAME: P passed, 0 failed". One line per suite:
#   under-load NAME: R/N runs passed
# and the script exits non-zero if any run failed. The hogs are killed on
# exit (also on Ctrl-C or TERM, by their process ids, with the process
# group of the run that was going on).
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=5
hogs=2
keep_logs=0
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
  --runs)
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "under_load: --runs needs a positive number" >&2; exit 2; }
    runs=$2; shift 2 ;;
  --hogs)
    [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "under_load: --hogs needs a number" >&2; exit 2; }
    hogs=$2; shift 2 ;;
  --suite)
    [ -n "${2:-}" ] || { echo "under_load: --suite needs a name" >&2; exit 2; }
    IFS=, read -r -a more <<<"$2"
    suites+=("${more[@]}"); shift 2 ;;
  --keep-logs) keep_logs=1; shift ;;
  -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
  *) echo "under_load: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

mapfile -t known < <(bash tests/run_all.sh --list)
[ ${#suites[@]} -gt 0 ] || suites=("${known[@]}")
for s in "${suites[@]}"; do
  case " ${known[*]} " in
  *" $s "*) ;;
  *) echo "under_load: unknown suite '$s' (suites: ${known[*]})" >&2; exit 2 ;;
  esac
done

logs=$(mktemp -d "${TMPDIR:-/tmp}/futoin-under-load.XXXXXX")
hog_pids=()
stop_hogs() {
  local pid
  for pid in "${hog_pids[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${hog_pids[@]}"; do
    wait "$pid" 2>/dev/null
  done
  hog_pids=()
}
run_pid=
cleanup() {
  # an interrupted run: its whole process group (setsid below)
  [ -z "$run_pid" ] || kill -TERM -- "-$run_pid" 2>/dev/null
  stop_hogs
  if [ $keep_logs = 0 ] && [ -z "$(ls -A "$logs" 2>/dev/null)" ]; then
    rm -rf "$logs"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < hogs; ++i)); do
  sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
echo "under-load: $hogs CPU hogs (pids ${hog_pids[*]}), $runs runs of: ${suites[*]}"

status=0
lines=()
for s in "${suites[@]}"; do
  ok=0
  for ((r = 1; r <= runs; ++r)); do
    log="$logs/$s.$r.log"
    start=$SECONDS
    # in the background and waited for, so that a signal ends the script
    # at once (the trap stops this run's process group and the hogs)
    setsid bash tests/run_all.sh --only "$s" >"$log" 2>&1 &
    run_pid=$!
    wait "$run_pid"
    rc=$?
    run_pid=
    line=$(grep -E "^$s: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
    if [ $rc = 0 ] && [[ $line =~ ,\ 0\ failed$ ]]; then
      ok=$((ok + 1))
      echo "under-load $s run $r/$runs: ${line:-?} ($((SECONDS - start)) s)"
      [ $keep_logs = 1 ] || rm -f "$log"
    else
      echo "under-load $s run $r/$runs: FAILED (exit $rc): ${line:-no summary line}; log $log"
      grep -E 'FAIL|Assert|ERROR|TIMEOUT|==[0-9]+==' "$log" | head -20
    fi
  done
  [ $ok = "$runs" ] || status=1
  lines+=("under-load $s: $ok/$runs runs passed")
done

stop_hogs
echo
for l in "${lines[@]}"; do echo "$l"; done
[ $keep_logs = 0 ] && [ -z "$(ls -A "$logs")" ] || echo "under-load: logs in $logs"
exit $status
