#!/usr/bin/env bash
# Preemption on a real Slurm cluster (the localhost fixture, or the multi-node one with NODES 2):
# a job submitted with
# `dtrain submit` (so the rendered script's --signal, --requeue, signal forwarding and requeue on
# exit status 85 are what runs) gets `scancel --signal=USR1` mid-run. Every rank must stop at the
# same step, the checkpoint of that step must be written, the job must requeue, resume at the next
# step, and end with a model equal, bit for bit, to an uninterrupted run's (train_job.cpp).
#   slurm_requeue_test.sh DTRAIN TRAIN_JOB SLURM_DIR [NODES RANKS_PER_NODE]   (default 1 2)
set -euo pipefail
DTRAIN=$1
TRAIN=$2
source "$3/env.sh"
nodes=${4:-1} per=${5:-2}
ranks=$((nodes * per))
T=120
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-requeue-test.XXXXXX")
job=""
cleanup() {
  if [[ -n $job ]]; then timeout 10 scancel "$job" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/events-rank-*.log; do
    [[ -f $f ]] && { echo "--- $f (last 5 lines)" >&2; tail -n 5 "$f" >&2; }
  done
  [[ -n $job ]] && timeout 10 scontrol show job "$job" >&2 || true
  for f in "$work"/runs/*/*.log "$work"/runs/*.out; do
    [[ -f $f ]] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
  done
  exit 1
}
expect_eq() { [[ "$1" == "$2" ]] || fail "$3: expected [$1], got [$2]"; }

steps=150
args=(--steps "$steps" --sleep-ms 40 --save-every 25)

echo "== reference: the same training, uninterrupted (srun, $nodes nodes x $per ranks)"
mkdir -p ref
timeout "$T" srun --mpi=pmix -N "$nodes" --ntasks-per-node="$per" "$TRAIN" "${args[@]}" --dir "$work/ref/ckpt" \
  --out "$work/ref/final.txt" || fail "the reference run failed"
[[ -s ref/final.txt ]] || fail "the reference run wrote no model"

echo "== the job: dtrain submit with a checkpoint: section"
cat >job.yaml <<YAML
name: preempt
site: slurm
nodes: $nodes
ranks_per_node: $per
walltime: "00:10:00"
partition: debug
affinity: {gpu: none, cpu: none}
checkpoint: {signal: USR1, grace: 60, requeue: true}
command: ["$TRAIN", --steps, "$steps", --sleep-ms, "40", --save-every, "25",
          --dir, "$work/ckpt", --out, "$work/final.txt"]
YAML
out=$(timeout "$T" "$DTRAIN" submit job.yaml 2>&1) || fail "dtrain submit exited $?: $out"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
[[ -n $job ]] || fail "no job id in: $out"
script=$work/runs/preempt-$job/launch.sh
grep -q -- '^#SBATCH --signal=B:USR1@60$' "$script" || fail "no --signal directive in $script"
grep -q -- '^#SBATCH --requeue$' "$script" || fail "no --requeue directive in $script"

# Mid-run: once every rank is past step 30 (and a periodic checkpoint exists).
past_step_30() {
  local r n
  for ((r = 0; r < ranks; r++)); do
    n=$(grep -c '^step ' "events-rank-$r.log" 2>/dev/null) || true
    ((${n:-0} >= 30)) || return 1
  done
}
deadline=$((SECONDS + T))
until past_step_30; do
  ((SECONDS < deadline)) || fail "the job did not reach step 30"
  sleep 0.1
done
echo "== scancel --signal=USR1 $job"
timeout 10 scancel --signal=USR1 "$job" || fail "scancel --signal=USR1 failed"

# The job requeues (Restarts=1) and then completes. Slurm makes a requeued batch job eligible only
# ~2 minutes after the requeue (EligibleTime, Reason=BeginTime; seen with 22.05 here): the test
# moves its start to now once it sees it waiting for that, which changes nothing else. Not at
# once: slurmd revokes the first run's credential with one-second resolution, and a restart in
# that same second is refused ("Job credential revoked") and fails the job (seen here).
state="" restarts="" hurried=0
deadline=$((SECONDS + 300))
while ((SECONDS < deadline)); do
  info=$(timeout 10 scontrol show job "$job" 2>/dev/null || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
  restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$info")
  [[ $state == COMPLETED || $state == FAILED || $state == CANCELLED ]] && break
  if ((!hurried)) && [[ $state == PENDING && $info == *Reason=BeginTime* ]]; then
    echo "== requeued (Restarts=$restarts); scontrol update StartTime=now"
    sleep 2
    timeout 10 scontrol update jobid="$job" StartTime=now || fail "scontrol update StartTime=now"
    hurried=1
  fi
  sleep 0.2
done
expect_eq COMPLETED "$state" "job $job final state"
expect_eq 1 "$restarts" "job $job restarts"
expect_eq "$nodes" "$(sed -n 's/.*NumNodes=\([0-9]*\).*/\1/p' <<<"$info")" "nodes of the requeued job"

echo "== every rank stopped at the same step, and the second run resumed right after it"
stop0=$(sed -n 's/^stop step=\([0-9]*\) .*/\1/p' events-rank-0.log)
[[ $stop0 =~ ^[0-9]+$ ]] || fail "rank 0 logged no single stop (got [$stop0])"
for ((r = 1; r < ranks; r++)); do
  expect_eq "$stop0" "$(sed -n 's/^stop step=\([0-9]*\) .*/\1/p' "events-rank-$r.log")" \
    "the step at which rank $r stopped (rank 0 stopped at $stop0)"
done
# The signal came once every rank had logged steps 0..29, so the earliest agreed stop is step 29
# (should_stop() follows each step's log line).
((stop0 >= 29 && stop0 < steps - 1)) || fail "stopped at step $stop0, not mid-run"
for ((r = 0; r < ranks; r++)); do
  expect_eq "start step=0 restart=0"$'\n'"start step=$((stop0 + 1)) restart=1" \
    "$(grep '^start ' events-rank-$r.log)" "rank $r start lines"
  expect_eq done "$(tail -n 1 events-rank-$r.log)" "rank $r last event"
  # Every step ran exactly once across the two runs.
  expect_eq "$(seq 0 $((steps - 1)))" "$(sed -n 's/^step //p' events-rank-$r.log)" "rank $r steps"
  grep -q "^stop step=$stop0 signal=10$" events-rank-$r.log ||
    fail "rank $r did not record SIGUSR1 (scancel signals every task)"
done
echo "stopped at step $stop0 on all $ranks ranks; resumed at $((stop0 + 1))"

echo "== the final model equals the uninterrupted run's"
[[ -s final.txt ]] || fail "the job wrote no model"
cmp ref/final.txt final.txt || fail "final model differs: $(paste -sd' ' ref/final.txt) vs $(paste -sd' ' final.txt)"
echo "model: $(paste -sd' ' final.txt)"
echo "slurm_requeue_test.sh: all checks passed"
