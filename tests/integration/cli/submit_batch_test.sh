#!/usr/bin/env bash
# dtrain submit to real schedulers: sbatch on the localhost Slurm cluster (torch and TensorFlow
# rendezvous variables per rank, rank logs in runs/<name>-<job id>/, --wait's exit status, a
# hostile command word arriving verbatim, sbatch's own error shown), and the generic `pbs` site
# through the qsub of Debian's slurm-wlm-torque against the same cluster.
#   submit_batch_test.sh DTRAIN SLURM_DIR
set -euo pipefail
DTRAIN=$1
source "$2/env.sh"
source "$(dirname "$0")/lib.sh"
enter_workdir batch-test
host=$(hostname)

# 8 ranks on a machine with 2 cores: the cluster declares 16 CPUs (see cluster.sh).
cat > job.yaml <<YAML
name: envcheck
site: slurm
nodes: 1
ranks_per_node: 8
walltime: "00:05:00"
partition: debug
framework: torch
affinity: {gpu: none, cpu: none}
command: [bash, -c, 'echo "RANK=\$RANK LOCAL_RANK=\$LOCAL_RANK WORLD_SIZE=\$WORLD_SIZE LOCAL_WORLD_SIZE=\$LOCAL_WORLD_SIZE NODE_RANK=\$NODE_RANK MASTER_ADDR=\$MASTER_ADDR MASTER_PORT=\$MASTER_PORT arg=\$1"', x, "\$(touch $work/pwned) a'b\"c"]
YAML

echo "== sbatch, torch: every rank's rendezvous variables and its log"
out=$(timeout 180 "$DTRAIN" submit job.yaml --wait 2>&1) || fail "submit exited $?: $out"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
[[ -n $job ]] || fail "no job id in: $out"
run_dir=$work/runs/envcheck-$job
expect_contains "$out" "run directory $run_dir" "submit output"
expect_contains "$out" "job $job completed (exit status 0)" "--wait result"
for f in job.yaml launch.sh plan.json exit-status; do
  [[ -f $run_dir/$f ]] || fail "expected $run_dir/$f"
done
[[ -z $(ls -A "$work/runs" | grep submitting || true) ]] || fail "a staging directory was left"
# Issue 22, item 22: the batch job's own output goes inside its run directory.
[[ -f $run_dir/envcheck-$job.out ]] || fail "expected sbatch's output in $run_dir/envcheck-$job.out: $(ls "$run_dir")"
[[ ! -e $work/runs/envcheck-$job.out ]] || fail "sbatch's output beside the run directory"
expect_eq "$job $run_dir" "$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(d["job"]["id"], d["run_dir"])' \
  "$run_dir/plan.json")" "plan.json job id and run_dir"
port=$((61000 + job % 4536))
for r in 0 1 2 3 4 5 6 7; do
  log=$run_dir/rank-0000$r.log
  [[ -f $log ]] || fail "expected $log"
  line=$(rank_output "$log")
  [[ $line =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z\  ]] || fail "no timestamp: $line"
  expect_eq "RANK=$r LOCAL_RANK=$r WORLD_SIZE=8 LOCAL_WORLD_SIZE=8 NODE_RANK=0 MASTER_ADDR=$host MASTER_PORT=$port arg=\$(touch $work/pwned) a'b\"c" \
    "${line#* }" "rank $r torch environment"
done
[[ ! -e $work/pwned ]] || fail "a command word was executed by a shell"

echo "== sbatch, tensorflow: TF_CONFIG lists every worker, and this task's index"
out=$(timeout 180 "$DTRAIN" submit job.yaml --wait --set framework=tensorflow --set ranks_per_node=2 \
  --set 'command=[bash, -c, "echo $TF_CONFIG"]' 2>&1) || fail "submit exited $?: $out"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
tf_port=$((20000 + (job % 96) * 128))
for r in 0 1; do
  line=$(rank_output "$work/runs/envcheck-$job/rank-0000$r.log")
  expect_eq "{\"cluster\":{\"worker\":[\"$host:$tf_port\",\"$host:$((tf_port + 1))\"]},\"task\":{\"type\":\"worker\",\"index\":$r}}" \
    "${line#* }" "rank $r TF_CONFIG"
done

echo "== --wait returns the job's exit status"
out=$(timeout 180 "$DTRAIN" submit job.yaml --wait --set ranks_per_node=2 \
  --set 'command=[bash, -c, "[ $RANK = 1 ] && exit 3; exit 0"]' 2>&1) && status=0 || status=$?
expect_eq 3 "$status" "exit status of a job whose rank 1 exits 3 ($out)"
expect_contains "$out" "FAILED (exit status 3)" "--wait result"
expect_contains "$out" "dtrain: first failure: rank 1 on $host exited with status 3" "--wait names the failing rank"

echo "== restarts: a new srun step after a failure with progress, DTRAIN_ATTEMPT in every rank (docs/fault-tolerance.md)"
# Rank 0 records a checkpoint (as libdtrain's Checkpointer would) and fails in attempt 0 only.
cat > crash_once.sh <<'SH'
if [[ $DTRAIN_RANK == 0 && $DTRAIN_ATTEMPT == 0 ]]; then
  echo "{\"v\":1,\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\",\"step\":1,\"path\":\"p\",\"world\":2}" \
    >> "$DTRAIN_RUN_DIR/checkpoints.jsonl"
  echo "error: crash in attempt $DTRAIN_ATTEMPT" >&2
  exit 3
fi
echo "attempt $DTRAIN_ATTEMPT of rank $DTRAIN_RANK ok"
SH
set +e
out=$(timeout 180 "$DTRAIN" submit job.yaml --wait --set ranks_per_node=2 --set restarts=1 \
  --set restart_backoff=0 --set framework=none --set "command=[bash, $work/crash_once.sh]" 2>&1)
status=$?
set -e
expect_eq 0 "$status" "exit status of a job restarted once ($out)"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
expect_contains "$out" "dtrain: job $job: attempt 1 failed: rank 0 on $host exited with status 3: error: crash in attempt 0; restarting" "--wait's restart line"
expect_contains "$out" "dtrain: job $job: attempt 2 completed" "--wait's completion line"
for r in 0 1; do
  grep -q "attempt 1 of rank $r ok" "$work/runs/envcheck-$job/rank-0000$r.log" ||
    fail "rank $r did not run attempt 1: $(cat "$work/runs/envcheck-$job/rank-0000$r.log")"
done
expect_eq 2 "$(wc -l < "$work/runs/envcheck-$job/attempts.jsonl")" "attempt records"

echo "== a job Slurm stops at its walltime (issue 22, item 20)"
out=$(timeout 300 "$DTRAIN" submit job.yaml --wait --set ranks_per_node=2 --set walltime=1 \
  --set 'command=[bash, -c, "echo started; exec sleep 600"]' 2>&1) && status=0 || status=$?
[[ $status != 0 && $status != 124 ]] || fail "exit status $status of a job stopped at its walltime: $out"
expect_contains "$out" "its walltime (00:01:00) was reached" "--wait at the walltime"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
report=$("$DTRAIN" logs --first-error "$work/runs/envcheck-$job")
[[ $report != *culprit* ]] || fail "--first-error blamed a rank for the walltime: $report"

echo "== sbatch's own error is shown with the command line; nothing is left behind"
before=$(ls "$work/runs" | wc -l)
out=$(timeout 60 "$DTRAIN" submit job.yaml --set partition=nosuch 2>&1) && status=0 || status=$?
expect_eq 1 "$status" "exit status when sbatch refuses ($out)"
expect_contains "$out" "sbatch --hold --parsable" "error names the command"
expect_contains "$out" "invalid partition specified: nosuch" "error shows sbatch's output"
expect_eq "$before" "$(ls "$work/runs" | wc -l)" "entries in runs/ after a refused submission"

echo "== pbs site through qsub (slurm-wlm-torque): torch variables, exit status"
if ! command -v qsub >/dev/null; then
  fail "qsub not found: scripts/install-deps installs slurm-wlm-torque"
fi
out=$(timeout 180 "$DTRAIN" submit job.yaml --wait --set site=pbs --set queue=debug \
  --set ranks_per_node=2 --set 'command=[bash, -c, "echo RANK=$RANK WORLD_SIZE=$WORLD_SIZE; [ $RANK = 0 ] || exit 4"]' 2>&1) && status=0 || status=$?
expect_eq 4 "$status" "exit status of the pbs job ($out)"
job=$(sed -n 's/^dtrain: submitted job \([0-9.a-z-]*\) to pbs .*/\1/p' <<<"$out")
[[ -n $job ]] || fail "no job id in: $out"
run_dir=$work/runs/envcheck-${job%%.*}
for r in 0 1; do
  line=$(rank_output "$run_dir/rank-0000$r.log")
  expect_eq "RANK=$r WORLD_SIZE=2" "${line#* }" "pbs rank $r"
done
expect_eq 4 "$(cat "$run_dir/exit-status")" "exit-status file"
echo PASS
