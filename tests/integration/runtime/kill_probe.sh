#!/usr/bin/env bash
# A dead or hung rank: runs runtime_probe with RUNTIME_PROBE_DIE_RANK=1 (rank 1 sends itself
# SIGNAL: KILL, or STOP to hang without closing anything) and DTRAIN_TIMEOUT=5 under a launcher,
# and checks that every other rank reported the failure (by default: failed with the collective's
# error, naming the operation and its sequence number) matching EXPECT, within the time limit.
#   kill_probe.sh [--line REGEX] [--within SECONDS] [--dead RANK] [--timeout SECONDS]
#                 N SIGNAL PROBE EXPECT LAUNCHER ARGS...
#   --line: the line that carries rank R's report, R written as {rank}; default: the probe's own
#           report of a failed collective, '^runtime_probe: rank {rank}: dtrain: allreduce #'
#   --within: seconds the whole launch may take (default 85; the launch is killed at 90)
#   --dead: the rank that dies (default 1; RUNTIME_PROBE_DIE_RANK), whose line is not checked
#   --timeout: DTRAIN_TIMEOUT (default 5); a longer one shows that the survivors did not wait for it
#   EXPECT: an extended regex every surviving rank's line must match; {host} stands for this
#           machine's host name
set -uo pipefail
line_regex='^runtime_probe: rank {rank}: dtrain: allreduce #' within=85 dead=1 deadline=5
while [[ ${1:-} == --* ]]; do
  case $1 in
    --line) line_regex=$2 ;;
    --within) within=$2 ;;
    --dead) dead=$2 ;;
    --timeout) deadline=$2 ;;
    *)
      echo "kill_probe: unknown option $1" >&2
      exit 2
      ;;
  esac
  shift 2
done
n=$1 signal=$2 probe=$3 expect=$4
shift 4
host_re=$(hostname | sed 's/[][\.*^$+?(){}|/]/\\&/g')
expect=${expect//\{host\}/$host_re}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$SECONDS
RUNTIME_PROBE_DIE_RANK=$dead RUNTIME_PROBE_SIGNAL=$signal DTRAIN_TIMEOUT=$deadline \
  timeout -s KILL 90 "$@" "$probe" >"$out" 2>&1
took=$((SECONDS - start))
cat "$out"
fail() {
  echo "kill_probe: FAIL: $*" >&2
  exit 1
}
((took < within)) || fail "the launch took $took s; expected under $within s"
for ((r = 0; r < n; r++)); do
  ((r == dead)) && continue
  line=$(grep -E "${line_regex//\{rank\}/$r}" "$out" | head -1)
  [[ -n $line ]] || fail "rank $r: expected a line matching /${line_regex//\{rank\}/$r}/"
  [[ $line =~ $expect ]] || fail "rank $r: expected the line to match /$expect/, got: $line"
done
echo "kill_probe: PASS: ranks other than $dead reported it in $took s"
