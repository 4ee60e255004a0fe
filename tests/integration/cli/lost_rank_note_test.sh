#!/usr/bin/env bash
# A rank ended before it heard which rank was lost (issue 33 item 5): the process that outlives
# the launch appends the report of a rank that did say it to that rank's log, once, naming itself;
# `dtrain logs --first-error` names the lost rank. On the local site through `dtrain submit` (the
# ranks play it: rank 2 reports rank 3 lost, rank 3 is SIGKILLed, ranks 0 and 1 fail without a
# word, as when Slurm ends the step first), and through `dtrain supervise` after a failed attempt
# on a run directory written here. No cluster, seconds.
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir cli-lost-rank
host=$(hostname)
lost="peer process lost: rank 3 (on $host) was killed or exited without finalizing"
report="dtrain: allreduce #1 (4096 bytes, mpi, rank 2 of 4): $lost; this rank's collectives fail from now on"

echo "== dtrain submit, local site: ranks 0 and 1 get rank 2's report, ranks 2 and 3 nothing"
cat >job.yaml <<YAML
name: lost
ranks_per_node: 4
command: [bash, -c, 'case \$DTRAIN_RANK in 2) echo "\$REPORT" >&2; exit 1;; 3) sleep 0.3; kill -9 \$\$;; *) sleep 1; exit 1;; esac']
env: {REPORT: "$report"}
YAML
submit_expecting 1 job.yaml "a job whose rank 3 was killed" || true
run=$(ls -d "$work"/runs/lost-*)
for r in 0 1; do
  expect_eq 1 "$(grep -c "$lost" "$run/rank-0000$r.log")" "lines naming rank 3 in rank $r's log"
  expect_contains "$(grep "$lost" "$run/rank-0000$r.log")" \
    " dtrain: rank $r ended before it heard what rank 2 reported: $lost (seen by rank 2 on that node); written after the launch ended, by dtrain submit" \
    "rank $r's log"
done
expect_eq 1 "$(grep -c "$lost" "$run/rank-00002.log")" "lines naming rank 3 in rank 2's log (its own)"
expect_eq 0 "$(grep -c "ended before it heard" "$run/rank-00003.log")" "notes in the lost rank's log"
expect_contains "$("$DTRAIN" logs --first-error "$run")" "first failure: rank 3 on $host was killed by signal 9" \
  "dtrain logs --first-error"

echo "== dtrain supervise after a failed attempt: the note before anything else, once"
sup=$work/supervised
mkdir "$sup"
t0=2026-11-28T10:00:00
for r in 0 1 2 3; do
  node=node$((r / 2 + 1))
  printf '%s.000000Z dtrain: rank %d of 4 started on %s (local rank %d of 2, pid 42%d): probe\n' \
    "$t0" "$r" "$node" $((r % 2)) "$r" >"$sup/rank-0000$r.log"
done
echo "$t0.500000Z dtrain: allreduce #1 (4096 bytes, mpi, rank 2 of 4): peer process lost: rank 3 (on node2) was killed or exited without finalizing; this rank's collectives fail from now on" >>"$sup/rank-00002.log"
echo "$t0.600000Z dtrain: rank 0 ended before it could report what its logger then heard: peer process lost: rank 3 (on node2) was killed or exited without finalizing (seen by rank 2 on that node)" >>"$sup/rank-00000.log"
echo "$t0.600001Z dtrain: rank 0 exited with status 255" >>"$sup/rank-00000.log"
cp "$sup/rank-00000.log" "$work/rank0-before"
for i in 1 2; do
  expect_status_and_message 1 "dtrain: attempt 1 of 1 failed" "$DTRAIN" supervise --run-dir "$sup" -- false
done
expect_eq 1 "$(grep -c "ended before it heard" "$sup/rank-00001.log")" "notes in rank 1's log after two failed runs"
expect_contains "$(tail -1 "$sup/rank-00001.log")" \
  " dtrain: rank 1 ended before it heard what rank 2 reported: peer process lost: rank 3 (on node2) was killed or exited without finalizing (seen by rank 2 on that node); written after the launch ended, by dtrain supervise" \
  "rank 1's last line"
cmp "$work/rank0-before" "$sup/rank-00000.log" || fail "rank 0's log, whose logger named rank 3, was changed"
expect_eq 0 "$(grep -c "ended before it heard" "$sup/rank-00003.log")" "notes in the lost rank's log"
expect_contains "$("$DTRAIN" logs --first-error "$sup")" "first failure: rank 3 on node2 went silent" \
  "dtrain logs --first-error after supervise"

echo "== the batch script's note-lost-rank after a failed launch (a job without restarts that nobody waits for)"
script=$work/script
mkdir "$script"
for r in 0 1 2 3; do head -n 1 "$sup/rank-0000$r.log" >"$script/rank-0000$r.log"; done
grep -F "rank 2 of 4): peer process lost" "$sup/rank-00002.log" >>"$script/rank-00002.log"
for i in 1 2; do
  out=$(cd "$script" && DTRAIN_RUN_DIR=$script "$DTRAIN" note-lost-rank 2>&1) ||
    fail "note-lost-rank exited non-zero: $out"
  if ((i == 1)); then
    expect_eq "dtrain: note-lost-rank: 2 rank log(s) of $script got the line naming the lost rank" "$out" \
      "note-lost-rank's report"
  else
    expect_eq "" "$out" "note-lost-rank's report when every log names rank 3 already"
  fi
done
for r in 0 1; do
  expect_contains "$(tail -1 "$script/rank-0000$r.log")" \
    " dtrain: rank $r ended before it heard what rank 2 reported: peer process lost: rank 3 (on node2) was killed or exited without finalizing (seen by rank 2 on that node); written after the launch ended, by the job script" \
    "rank $r's last line"
done
expect_status_and_message 2 "run directory" "$DTRAIN" note-lost-rank --run-dir "$work/no-such-dir"
echo PASS
