#!/usr/bin/env bash
# The Fashion-MNIST example (examples/fashion-mnist) submitted to the cluster for one epoch, on
# 1 node x 2 ranks, 2 nodes x 1 rank and 2 nodes x 2 ranks, same global batch and seed. Across
# nodes it reaches the accuracy it reaches on one node: with 2 ranks the very same model (a sum of
# two operands has one result whichever way it travels), with 4 ranks at least 85 %; and
# `dtrain stats` shows each node's throughput.
#   fashion_mnist_test.sh CLUSTER_DIR DTRAIN TRAIN
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 TRAIN=$3
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT
cd "$work"

# train NODES PER_NODE: submits, waits, prints the run directory.
train() {
  cat >job.yaml <<YAML
name: fmnist
site: slurm
nodes: $1
ranks_per_node: $2
walltime: "00:10:00"
partition: debug
affinity: {gpu: none, cpu: none}
command: [$TRAIN, --epochs, "1", --global-batch, "128", --no-checkpoint]
YAML
  local out job
  out=$(timeout 280 "$DTRAIN" submit job.yaml --wait 2>&1) || fail "submit ($1 x $2) exited $?: $out"
  job=$(sed -n 's/^dtrain: submitted job \([0-9]*\) to slurm .*/\1/p' <<<"$out")
  [[ -n $job ]] || fail "no job id in: $out"
  echo "$work/runs/fmnist-$job"
}
accuracy() { # run dir
  sed -n 's/.* final test accuracy \([0-9.]*\) % after 1 epoch on .*/\1/p' "$1/rank-00000.log"
}

one=$(train 1 2)
a_one=$(accuracy "$one")
[[ -n $a_one ]] || fail "no final accuracy in $one/rank-00000.log: $(tail -3 "$one/rank-00000.log")"
echo "1 node x 2 ranks: $a_one %"

two=$(train 2 1)
expect_eq "$a_one" "$(accuracy "$two")" "accuracy of 2 nodes x 1 rank (1 node x 2 ranks: $a_one %)"
grep -q ' started on node2 ' "$two/rank-00001.log" || fail "rank 1 did not run on node2"
echo "2 nodes x 1 rank: $(accuracy "$two") %"

four=$(train 2 2)
a_four=$(accuracy "$four")
[[ -n $a_four ]] || fail "no final accuracy in $four/rank-00000.log"
awk -v a="$a_four" 'BEGIN { exit !(a >= 85) }' || fail "2 nodes x 2 ranks: accuracy $a_four %, expected >= 85 %"
echo "2 nodes x 2 ranks: $a_four %"

stats=$("$DTRAIN" stats "$four")
expect_match "$stats" $'\n''node1 +0-1 +[0-9]+ +[0-9.]+ +[0-9.e+]+'$'\n''node2 +2-3 ' "per-node throughput"
awk '/^node /{p=1} /^stragglers/{p=0} p' <<<"$stats"
echo PASS
