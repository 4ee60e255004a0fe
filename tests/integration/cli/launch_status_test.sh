#!/usr/bin/env bash
# A requeue the launcher did not pass on: every rank exited 85 (dtrain::kExitRequeue) after the
# agreed stop, but MPICH's mpiexec may exit 0 then, and PALS' status is not known. The job script's
# `dtrain launch-status` and `dtrain supervise` act on the ranks' exit lines in their logs; a rank
# that failed otherwise keeps the launcher's status. Run directories written here; seconds.
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir cli-launch-status
t0=2026-11-28T10:00:00

logs() {  # logs DIR EXIT... : one rank log per EXIT ("85", "1", "sig15", "none": no exit line)
  local dir=$1 r=0 e
  shift
  mkdir -p "$dir"
  for e in "$@"; do
    printf '%s.000000Z dtrain: rank %d of %d started on node1 (local rank %d of %d, pid 42%d): train\n' \
      "$t0" "$r" $# "$r" $# "$r" >"$dir/rank-0000$r.log"
    echo "$t0.100000Z step 40" >>"$dir/rank-0000$r.log"
    case $e in
      none) ;;
      sig*) echo "$t0.200000Z dtrain: rank $r was killed by signal ${e#sig} (SIGTERM)" >>"$dir/rank-0000$r.log" ;;
      *) echo "$t0.200000Z dtrain: rank $r exited with status $e" >>"$dir/rank-0000$r.log" ;;
    esac
    r=$((r + 1))
  done
}

echo "== launch-status: the ranks' 85 overrules a launcher that said 0 or its own status"
logs "$work/all" 85 85
out=$("$DTRAIN" launch-status --run-dir "$work/all" 0 2>"$work/err")
expect_eq 85 "$out" "the status after every rank exited 85 and the launcher 0"
expect_eq "dtrain: the launcher exited with status 0, but every rank exited 85 after saving (a requeue): the job acts on status 85" \
  "$(cat "$work/err")" "launch-status's reason"
logs "$work/torn" 85 sig15 none
out=$("$DTRAIN" launch-status --run-dir "$work/torn" 143 2>"$work/err")
expect_eq 85 "$out" "the status after rank 0 exited 85 and the launcher ended the others"
expect_contains "$(cat "$work/err")" "ranks 1-2 after: the job acts on status 85" "launch-status's reason"

echo "== a rank that failed otherwise, or the launcher's own 85: unchanged, nothing said"
logs "$work/failed" 85 1
expect_eq 1 "$("$DTRAIN" launch-status --run-dir "$work/failed" 1 2>"$work/err")" "a failed rank's status"
expect_eq "" "$(cat "$work/err")" "launch-status's words when it keeps the status"
expect_eq 0 "$("$DTRAIN" launch-status --run-dir "$work/failed" 0 2>/dev/null)" "launcher 0, rank 1 failed"
expect_eq 85 "$("$DTRAIN" launch-status --run-dir "$work/all" 85 2>"$work/err")" "the launcher's 85"
expect_eq "" "$(cat "$work/err")" "launch-status's words after the launcher's 85"
expect_status_and_message 2 "run directory" "$DTRAIN" launch-status --run-dir "$work/no-such-dir" 0
expect_status_and_message 2 "STATUS" "$DTRAIN" launch-status --run-dir "$work/all" 300

echo "== dtrain supervise: an attempt whose launcher exited 0 after every rank exited 85 is a requeue"
logs "$work/sup" 85 85
expect_status_and_message 85 "the job acts on status 85" "$DTRAIN" supervise --run-dir "$work/sup" \
  --restarts 2 -- true
expect_contains "$(cat "$work/sup/attempts.jsonl")" '"the ranks asked for a requeue (exit status 85)"' \
  "the attempt's record"
echo PASS
