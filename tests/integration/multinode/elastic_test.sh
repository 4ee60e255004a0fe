#!/usr/bin/env bash
# The elastic node range on Slurm (docs/fault-tolerance.md), as a user meets it: the Fashion-MNIST
# example submitted with `nodes: 2..3` and `restarts: 1` (3 nodes x 2 ranks, a checkpoint every 10
# steps); once the first checkpoint is recorded, the harness kills the job's last node whole (its
# slurmd and every process on it). The job carries on from the last checkpoint on the 2 nodes left
# (4 ranks) and completes (exit 0); `dtrain submit --wait`, attempts.jsonl and
# `dtrain logs --first-error` name the lost node. The node is revived afterwards.
#   elastic_test.sh CLUSTER_DIR CLUSTER_SH DTRAIN TRAIN
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
cluster_dir=$1 cluster_sh=$2 DTRAIN=$3 TRAIN=$4
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
work=$(scratch_dir)
submit_pid="" lost_index=""
cleanup() {
  [[ -n $submit_pid ]] && kill "$submit_pid" 2>/dev/null
  # Whatever happens, the lost node rejoins for the tests after this one.
  [[ -z $lost_index ]] || bash "$cluster_sh" revive-node "$cluster_dir" "$lost_index" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# restart_backoff 15 s: longer than the cluster's SlurmdTimeout (10 s), so Slurm has marked the
# node before the supervisor asks.
cat >job.yaml <<YAML
name: elastic
site: slurm
nodes: 2..3
ranks_per_node: 2
walltime: "00:10:00"
partition: debug
affinity: {gpu: none, cpu: none}
env: {DTRAIN_TIMEOUT: "5"}
restarts: 1
restart_backoff: 15
command: [$TRAIN, --epochs, "1", --steps-per-epoch, "400", --global-batch, "96", --checkpoint-every, "10", --log-every, "10"]
YAML
: >submit.out
timeout 280 "$DTRAIN" submit job.yaml --wait >submit.out 2>&1 &
submit_pid=$!
run_dir=""
for ((i = 0; i < 1200; i++)); do
  [[ -n $run_dir ]] || run_dir=$(sed -n 's/^dtrain: submitted job .* run directory \(.*\)$/\1/p' submit.out)
  [[ -n $run_dir && -s $run_dir/checkpoints.jsonl ]] && break
  # The rank logs' last lines too: a crash's backtrace (Open MPI prints it there) says where.
  kill -0 "$submit_pid" 2>/dev/null ||
    fail "the job ended before its first checkpoint: $(cat submit.out)
$( [[ -n $run_dir ]] && tail -n 25 "$run_dir"/rank-*.log 2>/dev/null)"
  sleep 0.1
done
[[ -s $run_dir/checkpoints.jsonl ]] || fail "no checkpoint record in 120 s: $(cat submit.out)"
# The last node of the job: rank 5's (ranks fill the nodes in order); never the batch host.
lost=$(sed -n 's/.* dtrain: rank 5 of 6 started on \([^ ]*\) .*/\1/p' "$run_dir/rank-00005.log" | head -1)
[[ -n $lost ]] || fail "no start line of rank 5: $(head -3 "$run_dir/rank-00005.log")"
lost_index=${lost##*[!0-9]}
bash "$cluster_sh" lose-node "$cluster_dir" "$lost_index"
echo "killed $lost after checkpoint: $(head -1 "$run_dir/checkpoints.jsonl")"

status=0
wait "$submit_pid" || status=$?
submit_pid=""
out=$(cat submit.out)
grep '^dtrain: ' submit.out || true
expect_eq 0 "$status" "exit status of the job that lost $lost ($out)"
# `dtrain submit --wait` reports each attempt record as it appears.
expect_match "$out" "dtrain: job [0-9]+: attempt 1 failed: node $lost lost \\([A-Z_]+\\)" "submit --wait"
expect_match "$out" "dtrain: job [0-9]+: attempt 2 completed" "submit --wait"
# The job's own output: the supervisor's lines and the example's resume line.
job_out=$(cat "$run_dir"/elastic-*.out)
grep '^dtrain: ' <<<"$job_out" || true
expect_contains "$job_out" "dtrain: attempt 1 of 2 failed: node $lost lost (" "restart line"
expect_contains "$job_out" "; restarting on 2 of 3 nodes (without $lost)" "restart line"
expect_contains "$job_out" "dtrain: attempt 2 of 2 completed" "completion line"
expect_match "$job_out" "resumed from [^ ]*/ckpt-0*[1-9][0-9]*0 at epoch 1, step [1-9][0-9]*0" "resume line"
echo "ok: $(grep -o 'resumed from .*' <<<"$job_out" | head -1)"

python3 - "$run_dir/attempts.jsonl" "$lost" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
lost = sys.argv[2]
assert len(lines) == 2, f"expected 2 attempt records, got {len(lines)}: {lines}"
a0, a1 = (json.loads(l) for l in lines)
assert a0["outcome"] == "restarted" and a0["status"] != 0, a0
assert a0["cause"].startswith(f"node {lost} lost ("), a0
assert a0["ranks"] == 6 and len(a0["nodes"]) == 3 and lost in a0["nodes"], a0
assert a0["checkpoints"] >= 1, a0
assert a1["outcome"] == "completed" and a1["status"] == 0, a1
assert a1["ranks"] == 4 and len(a1["nodes"]) == 2 and lost not in a1["nodes"], a1
print("ok: attempts.jsonl:", a0["cause"][:70], "/", a1["ranks"], "ranks on", a1["nodes"])
PY
# The second attempt's world: 4 ranks, each told so.
grep -q "dtrain: rank 3 of 4 started on " "$run_dir/rank-00003.log" ||
  fail "rank 3's log has no start line of a 4-rank world: $(grep started "$run_dir/rank-00003.log")"
report=$("$DTRAIN" logs --first-error "$run_dir") || true
expect_contains "$report" "node $lost lost (" "dtrain logs --first-error"
echo "ok: $(grep -m1 "node $lost lost" <<<"$report")"
echo PASS
