#!/usr/bin/env bash
# dtrain submit across nodes: a `site: slurm` spec with 2 nodes x 2 ranks and 4 nodes x 1 rank,
# and `site: pbs` through Slurm's qsub wrapper on 2 nodes. `--wait` runs the job to completion;
# the run directory on the shared file system holds every rank's log and metrics; `dtrain logs`
# prefixes each line with its rank and node; `dtrain stats` shows each node's throughput. The
# same holds for a run directory that `srun --dtrain-run-dir` (the SPANK plugin) wrote.
#   submit_test.sh CLUSTER_DIR DTRAIN PI
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 PI=$3
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT
cd "$work"

# check_run RUN_DIR NODES PER_NODE: logs, metrics, prefixes and the per-node stats of a pi run.
check_run() {
  local run=$1 nodes=$2 per=$3 n r node logs stats
  n=$((nodes * per))
  for ((r = 0; r < n; r++)); do
    [[ -s $run/rank-0000$r.log ]] || fail "no log of rank $r in $run: $(ls "$run")"
    [[ -s $run/rank-0000$r.jsonl ]] || fail "no metrics of rank $r in $run"
  done
  logs=$("$DTRAIN" logs "$run")
  for ((r = 0; r < n; r++)); do
    node=node$((r / per + 1))
    expect_contains "$logs" "[$r@$node] dtrain: rank $r of $n started on $node (local rank $((r % per)) of $per," "dtrain logs"
    expect_contains "$logs" "[$r@$node] rank $r/$n: " "dtrain logs: rank $r's own output"
  done
  expect_contains "$logs" "[0@node1] pi ~= 3.14" "dtrain logs: the result"
  stats=$("$DTRAIN" stats "$run")
  for ((k = 0; k < nodes; k++)); do
    r=$((k * per))
    local ranks=$r
    ((per == 1)) || ranks="$r-$((r + per - 1))"
    expect_match "$stats" $'\n'"node$((k + 1)) +$ranks +$((per * 5000000 * 4 / n)) " "dtrain stats: node$((k + 1))'s line"
  done
  echo "ok: $run: $n rank logs and metrics, [rank@node] prefixes, per-node stats"
  awk '/^node /{p=1} /^stragglers/{p=0} p' <<<"$stats"
}

spec() { # site nodes per_node
  cat <<YAML
name: pi
site: $1
nodes: $2
ranks_per_node: $3
walltime: "00:05:00"
affinity: {gpu: none, cpu: none}
command: [$PI, --samples, "20000000", --steps, "10"]
YAML
}

for shape in "2 2" "4 1"; do
  read -r nodes per <<<"$shape"
  echo "== site slurm: $nodes nodes x $per ranks"
  spec slurm "$nodes" "$per" >job.yaml
  echo "partition: debug" >>job.yaml
  out=$(timeout 240 "$DTRAIN" submit job.yaml --wait 2>&1) || fail "submit exited $?: $out"
  job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
  [[ -n $job ]] || fail "no job id in: $out"
  expect_contains "$out" "job $job completed (exit status 0)" "--wait"
  check_run "$work/runs/pi-$job" "$nodes" "$per"
done

# Slurm's Torque wrapper turns nodes=N:ppn=P into N nodes and N*P tasks without a per-node
# count, so Slurm lays more than P ranks on the first node and mpirun's -npernode P cannot place
# them: one rank per node is what it can carry (docs/multinode.md).
echo "== site pbs through qsub: 2 nodes x 1 rank"
spec pbs 2 1 >job.yaml
echo "queue: debug" >>job.yaml
out=$(timeout 240 "$DTRAIN" submit job.yaml --wait 2>&1) || fail "submit exited $?: $out"
job=$(sed -n 's/^dtrain: submitted job \([0-9]*\)[.a-z0-9-]* to pbs .*/\1/p' <<<"$out")
[[ -n $job ]] || fail "no job id in: $out"
check_run "$work/runs/pi-$job" 2 1

# The plugin writes the same run directory (records::tee_output): the start lines carry each
# rank's node, so the prefixes and the per-node rows of `dtrain stats` work without dtrain submit.
echo "== srun --dtrain --dtrain-run-dir: 2 nodes x 2 ranks, no dtrain submit"
timeout 240 srun -p debug -N2 --ntasks-per-node=2 --dtrain --dtrain-run-dir="$work/plugin-run" \
  "$PI" --samples 20000000 --steps 10 >plugin.out 2>&1 || fail "srun exited $?: $(cat plugin.out)"
check_run "$work/plugin-run" 2 2
echo PASS
