#!/usr/bin/env bash
# dtrain run inside an allocation (docs/submit.md): `salloc -N 2` then `dtrain run -n 4 PROGRAM`
# launches with srun on the allocation's 2 nodes (4 ranks each), not with mpirun here, and writes
# the run directory runs/<name>-<allocation>.0 with every rank's log; a second launch in the same
# allocation, `dtrain submit --here` of a spec, gets runs/<name>-<allocation>.1.
#   run_allocation_test.sh CLUSTER_DIR DTRAIN PI
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 PI=$3
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT
cd "$work"

cat >job.yaml <<YAML
name: pi
site: slurm
nodes: 2
ranks_per_node: 1
affinity: {gpu: none, cpu: none}
command: [$PI, --samples, "2000000", --steps, "4"]
YAML
# The allocation's shell: both launches, one after the other, in the one allocation.
cat >in_allocation.sh <<SCRIPT
set -e
echo "allocation \$SLURM_JOB_ID on \$SLURM_JOB_NODELIST"
"$DTRAIN" run -n 4 --name pi --set 'affinity={gpu: none, cpu: none}' "$PI" --samples 20000000 --steps 10
"$DTRAIN" submit --here job.yaml
SCRIPT
out=$(timeout 240 salloc -p debug -N 2 --exclusive bash in_allocation.sh 2>&1) ||
  fail "salloc exited $?: $out"
echo "$out" | grep -E '^(allocation|dtrain: job|salloc)'
job=$(sed -n 's/^allocation \([0-9]*\) on .*/\1/p' <<<"$out")
[[ -n $job ]] || fail "no allocation id in: $out"

run=$work/runs/pi-$job.0
expect_contains "$out" "dtrain: job $job (site slurm, 8 ranks on 2 node(s) of allocation $job), run directory $run" "dtrain run's first line"
expect_contains "$out" "dtrain: job $job completed (exit status 0); logs and metrics in $run" "dtrain run's last line"
expect_contains "$out" "pi ~= 3.14" "rank 0's result on the terminal"
expect_contains "$(cat "$run/launch.sh")" "launch=(srun --mpi=pmix --nodes=2 --ntasks-per-node=4" "the job script's launcher"
logs=$("$DTRAIN" logs "$run")
for ((r = 0; r < 8; r++)); do
  node=node$((r / 4 + 1))
  expect_contains "$logs" "[$r@$node] dtrain: rank $r of 8 started on $node (local rank $((r % 4)) of 4," "rank $r on $node"
done

here=$work/runs/pi-$job.1
expect_contains "$out" "dtrain: job $job (site slurm, 2 ranks on 2 node(s) of allocation $job), run directory $here" "submit --here's first line"
expect_contains "$out" "dtrain: job $job completed (exit status 0); logs and metrics in $here" "submit --here's last line"
logs=$("$DTRAIN" logs "$here")
expect_contains "$logs" "[1@node2] dtrain: rank 1 of 2 started on node2" "submit --here's rank 1 on node2"
echo PASS
