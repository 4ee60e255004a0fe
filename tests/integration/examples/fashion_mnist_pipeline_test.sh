#!/usr/bin/env bash
# The pipeline-parallel Fashion-MNIST example, shortened to 40 steps, through `dtrain submit` on
# the local site: 2 stages (1F1B) and 3 stages (GPipe) print which layers each rank holds and
# every step's loss, and reach the accuracy of its data-parallel sibling (examples/fashion-mnist)
# on 1 rank with the same batch and seed: the same losses and accuracy bit for bit (docs/examples.md
# says why); the mlp on 4 stages within a point of its data-parallel run; the first stage records
# each step's samples for `dtrain stats`; more ranks than layers and a micro-batch count that does
# not divide the batch are refused.
#   fashion_mnist_pipeline_test.sh DTRAIN PIPELINE DATA_PARALLEL SRC
set -euo pipefail
DTRAIN=$1 PIPELINE=$2 DATA_PARALLEL=$3 SRC=$4
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir fmnist-pipeline-test
cp "$SRC/examples/fashion-mnist-pipeline/job.yaml" job.yaml
# A record per step (docs/metrics.md, "Detail"): the checks below count them.
printf 'env:\n  DTRAIN_RECORDS: steps\n' >> job.yaml

short=(--epochs 1 --steps-per-epoch 40 --warmup-steps 20 --log-every 1)
# What both programs print of a run: every step's loss and the accuracies (the pipeline's and the
# data-parallel header and the epoch's seconds differ by design).
training() { grep -E '^(step [0-9]+ loss|epoch |final test accuracy)' <<< "$1" | sed 's/, [0-9.]* s$//; s/ on [0-9]* ranks$//'; }

echo "== data-parallel sibling: examples/fashion-mnist on 1 rank"
sibling=$("$DATA_PARALLEL" "${short[@]}" --no-checkpoint 2>&1) || fail "the data-parallel run exited $?: $sibling"
expect_eq 40 "$(grep -c '^step [0-9]* loss' <<< "$sibling")" "loss lines of the data-parallel run"

for run in "2 1f1b" "3 gpipe"; do
  read -r ranks schedule <<< "$run"
  echo "== $ranks stages, $schedule, 4 micro-batches of 32"
  out=$("$DTRAIN" submit job.yaml --set ranks_per_node="$ranks" \
    --set "command=$(yaml_command "$PIPELINE" "${short[@]}" --schedule "$schedule")" 2>&1) ||
    fail "submit with $ranks ranks exited $?: $out"
  echo "$out" | grep -vE '^step [0-9]+ loss'
  expect_contains "$out" "fashion-mnist-pipeline: $ranks stages on $ranks ranks, 60000 training images (40 steps/epoch of global batch 128 as 4 micro-batches of 32, schedule $schedule), 10000 test images, model cnn 8,16, 1 epoch, seed 2026" "header"
  if [[ $ranks == 2 ]]; then
    expect_contains "$out" $'stage 0 (rank 0): conv 5x5 8; 156800 multiply-adds per image\nstage 1 (rank 1): conv 3x3 16, dense 784-10; 233632 multiply-adds per image' "stages"
  else
    expect_contains "$out" $'stage 1 (rank 1): conv 3x3 16; 225792 multiply-adds per image\nstage 2 (rank 2): dense 784-10; 7840 multiply-adds per image' "stages"
  fi
  grep -qE "^final test accuracy [0-9.]+ % after 1 epoch on $ranks ranks$" <<< "$out" ||
    fail "expected rank 0 to print the final accuracy on $ranks ranks, got: $out"
  expect_eq "$(training "$sibling")" "$(training "$out")" "every loss and accuracy, $ranks stages against 1 data-parallel rank"
  expect_contains "$out" "# throughput" "submit output"
  run_dir=$(ls -d "$work"/runs/fashion-mnist-pipeline-* | tail -1)
  mv "$run_dir" "$work/runs/p$ranks"
  expect_eq 40 "$(grep -c '"type":"step",.*"samples":128,' "$work/runs/p$ranks/rank-00000.jsonl")" "rank 0's step records of 128 samples"
  last=$((ranks - 1))
  expect_eq 40 "$(grep -c '"type":"step",.*"samples":0,' "$work/runs/p$ranks/rank-0000$last.jsonl")" "rank $last's step records of 0 samples"
done
echo "2 and 3 stages: every loss and the accuracy equal to the data-parallel run's"

echo "== the mlp on 4 stages against its data-parallel run"
mlp=(--model mlp --hidden 256,128,64 --epochs 1 --steps-per-epoch 40 --warmup-steps 20 --log-every 10)
sibling=$("$DATA_PARALLEL" "${mlp[@]}" --no-checkpoint 2>&1) || fail "the data-parallel mlp exited $?: $sibling"
out=$("$DTRAIN" submit job.yaml --set ranks_per_node=4 --set "command=$(yaml_command "$PIPELINE" "${mlp[@]}")" 2>&1) ||
  fail "the 4-stage mlp exited $?: $out"
expect_contains "$out" "stage 3 (rank 3): dense 64-10; 640 multiply-adds per image" "stages"
python3 - "$(training "$sibling")" "$(training "$out")" <<'PY'
# Its whole-batch products add in another order than the micro-batches' (Model::train_chunk is
# the whole batch for the mlp): the same training up to rounding.
import re, sys
def read(text):
    loss = [float(x) for x in re.findall(r"^step \d+ loss ([0-9.]+)", text, re.M)]
    return loss, float(re.search(r"final test accuracy ([0-9.]+) %", text).group(1))
(l1, a1), (l4, a4) = read(sys.argv[1]), read(sys.argv[2])
assert len(l1) == len(l4) == 4, (l1, l4)
worst = max(abs(x - y) / x for x, y in zip(l1, l4))
assert worst <= 0.01, f"losses {l1} vs {l4}: up to {100 * worst:.3f} % apart; expected within 1 %"
assert abs(a1 - a4) <= 1.0, f"test accuracy {a1} % vs {a4} %; expected within 1 point"
print(f"mlp on 4 stages: losses within {100 * worst:.4f} % of the data-parallel run's, accuracy {a4} % vs {a1} %")
PY

echo "== refused: more ranks than layers, a micro-batch count that does not divide the batch"
"$DTRAIN" submit job.yaml --set ranks_per_node=4 \
  --set "command=$(yaml_command "$PIPELINE" "${short[@]}")" > too-many.out 2>&1 && fail "4 stages of a 3-layer model ran: $(cat too-many.out)"
expect_contains "$(cat too-many.out)" "dtrain-fashion-mnist-pipeline: the model cnn 8,16 has 3 layers and each stage, one per rank, holds at least one; expected at most 3 ranks, got 4" "message"
expect_status_and_message 2 "--micro-batches: expected a divisor of --global-batch 128, got 5" "$PIPELINE" --micro-batches 5
echo PASS
