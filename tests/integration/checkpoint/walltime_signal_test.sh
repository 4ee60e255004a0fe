#!/usr/bin/env bash
# The checkpoint signal before the walltime, end to end on the local site (issue 36, item 1): a
# job with a walltime of 25 s and `checkpoint: {signal: USR2, grace: 12}` gets SIGUSR2 from its
# launch script's own timer 13 s in (the mechanism the PBS Pro, Torque and Cobalt scripts use,
# since those schedulers send nothing before the walltime), not the walltime's SIGTERM at 25 s:
# every rank stops at the same step, saves that step's checkpoint and exits 85, which `dtrain
# submit` reports as a requeue request.
#   walltime_signal_test.sh DTRAIN TRAIN_JOB
set -euo pipefail
DTRAIN=$1
TRAIN=$2
source "$(dirname "$0")/../cli/lib.sh"
enter_workdir walltime-signal

cat >job.yaml <<YAML
name: timed
ranks_per_node: 2
walltime: "00:00:25"
affinity: {gpu: none, cpu: none}
checkpoint: {signal: USR2, grace: 12}
command: ["$TRAIN", --steps, "100000", --sleep-ms, "50", --dir, "$work/ck", --out, "$work/final.txt"]
YAML
# The signal comes 25 - 12 = 13 s into the launch.
"$DTRAIN" plan job.yaml >plan.out 2>&1 || fail "plan exited $?: $(cat plan.out)"
expect_contains "$(cat plan.out)" "timeout --foreground --signal=TERM --kill-after=30 25 timeout --foreground --preserve-status --signal=USR2 13 mpirun" "the launch line"

start=$SECONDS
status=0
"$DTRAIN" submit job.yaml >submit.out 2>&1 || status=$?
took=$((SECONDS - start))
expect_eq 85 "$status" "exit status (85: the ranks saved and asked for a requeue; 124 would be the walltime) of: $(cat submit.out)"
expect_contains "$(cat submit.out)" "stopped for a requeue (exit status 85)" "submit summary"
((took >= 13 && took < 25)) || fail "the job ended after ${took} s; expected between the signal (13 s) and the walltime (25 s)"

echo "== every rank received SIGUSR2 itself and stopped at the same step, with its checkpoint"
stop0=$(sed -n 's/^stop step=\([0-9]*\) signal=12$/\1/p' events-rank-0.log)
[[ $stop0 =~ ^[0-9]+$ ]] || fail "rank 0 logged no stop on SIGUSR2 (12): $(tail -n 3 events-rank-0.log)"
expect_eq "stop step=$stop0 signal=12" "$(grep '^stop ' events-rank-1.log)" "rank 1's stop (rank 0 stopped at $stop0)"
# 13 s of 50 ms steps, less the start-up: well past step 50, far from the end.
((stop0 >= 50 && stop0 < 1000)) || fail "stopped at step $stop0; expected about 13 s of 50 ms steps"
ckpt=$(printf '%s/ck/ckpt-%012d' "$work" "$stop0")
[[ -e $ckpt ]] || fail "expected the checkpoint $ckpt, found: $(ls "$work/ck")"
for r in 0 1; do
  expect_contains "$(tail -n 1 runs/timed-*/rank-0000$r.log)" "dtrain: rank $r exited with status 85" "rank $r's exit line"
done
echo PASS
