#!/usr/bin/env bash
# examples/pytorch-ddp submitted to the cluster on 2 nodes x 2 ranks (framework: torch), once with
# gloo and once with --backend dtrain, the same seed: each rank's loss at every step within 1e-4
# relative of gloo's and the same parameters on every rank under dtrain
# (tests/integration/python/ddp_same_training.py, the one-node check), and each rank on the node
# the layout puts it. 25 steps, not the one-node test's 40: a sum of 4 ranks' gradients adds in
# gloo's ring order there and in the hierarchy's here, 1 ulp apart, and training grows that
# difference (measured per rank: 1e-7 at step 4, 1e-6 by step 12, 2e-5 at step 32, 1-2e-4 from
# step 37 on; gloo's parameters against dtrain's 6.6e-4 apart after 40 steps).
#   pytorch_ddp_test.sh CLUSTER_DIR DTRAIN SRC BUILD
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 SRC=$3 BUILD=$4
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT
cd "$work"
steps=25
read -ra nodes <<<"$DTRAIN_CLUSTER_NODES"
for backend in gloo dtrain; do
  mkdir "$backend"
  command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 1 \
    --steps-per-epoch "$steps" --log-every 5 --no-checkpoint --backend "$backend" \
    --final-state "$work/$backend")
  cat >job.yaml <<YAML
name: ddp-$backend
site: slurm
nodes: 2
ranks_per_node: 2
walltime: "00:05:00"
partition: debug
framework: torch
affinity: {gpu: none, cpu: none}
env:
  PYTHONPATH: $BUILD/python
  PYTHONUNBUFFERED: "1"
command: $command
YAML
  out=$(timeout 200 "$DTRAIN" submit job.yaml --wait 2>&1) ||
    fail "submit ($backend) exited $?: $out"
  job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
  [[ -n $job ]] || fail "no job id in: $out"
  run=$work/runs/ddp-$backend-$job
  expect_contains "$out" "job $job completed (exit status 0)" "--wait ($backend)"
  log=$(cat "$run/rank-00000.log")
  expect_contains "$log" "pytorch-ddp: 4 ranks" "rank 0's header ($backend)"
  expect_contains "$log" ", backend $backend" "rank 0's header ($backend)"
  for r in 0 1 2 3; do
    grep -q " started on ${nodes[r / 2]} " "$run/rank-0000$r.log" ||
      fail "rank $r did not run on ${nodes[r / 2]} ($backend): $(head -3 "$run/rank-0000$r.log")"
  done
  echo "$backend: $(grep -o "step $steps loss .*" <<<"$log"),"\
    "$(grep -o 'final test accuracy .*' <<<"$log")"
done
/usr/bin/python3 "$SRC/tests/integration/python/ddp_same_training.py" "$work" 4 "$steps"
