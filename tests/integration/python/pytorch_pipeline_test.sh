#!/usr/bin/env bash
# examples/pytorch-pipeline through `dtrain submit` on the local site (framework: torch, real
# mpirun, backend "dtrain"), shortened to 30 steps: 3 stages in 1F1B order (a first, a middle and a
# last stage) print which modules each rank holds and every step's loss, the first stage records
# every step's samples, and the run matches the data-parallel sibling, examples/pytorch-ddp on 2
# ranks: its epoch's training loss within 0.5 %, the accuracy within a point.
#   pytorch_pipeline_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir pipeline-test
# The shipped specs, with this build's module, the examples by absolute path and a record per step
# (docs/metrics.md, "Detail"): the checks below count them.
for example in pytorch-pipeline pytorch-ddp; do
  sed -e "s|PYTHONPATH: build/python|PYTHONPATH: $BUILD/python|" \
      -e "s|examples/$example/train.py|$SRC/examples/$example/train.py|" \
      -e "s|^env:|env:\n  DTRAIN_RECORDS: steps|" \
      "$SRC/examples/$example/job.yaml" > "$example.yaml"
  grep -q "PYTHONPATH: $BUILD/python" "$example.yaml" || fail "$example/job.yaml: no PYTHONPATH line to point at the build"
done
losses() { sed -n 's/^\(.* \)\?step \([0-9]*\) loss \([0-9.]*\)$/\2 \3/p' <<< "$1"; }
accuracy() { sed -n 's/^\(.* \)\?final test accuracy \([0-9.]*\) % after 1 epoch on [0-9]* ranks$/\2/p' <<< "$1"; }
train_loss() { sed -n 's/^\(.* \)\?epoch 1\/1: train loss \([0-9.]*\), .*/\2/p' <<< "$1"; }
echo "== 3 stages, 1f1b, 4 micro-batches of 32"
command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-pipeline/train.py" --epochs 1 \
  --steps-per-epoch 30 --log-every 1)
out=$("$DTRAIN" submit pytorch-pipeline.yaml --set ranks_per_node=3 --set "command=$command" 2>&1) ||
  fail "the 3-stage run exited $?: $out"
echo "$out" | grep -vE '^(.* )?step [0-9]+ loss'
expect_contains "$out" "pytorch-pipeline: 3 stages on 3 ranks (pmix), 60000 training images (30 steps/epoch of global batch 128 as 4 micro-batches of 32, schedule 1f1b), 10000 test images, 1 epoch, seed 2026, backend dtrain" "header"
expect_contains "$out" $'stage 0 (rank 0): Conv2d 1-16 3x3, ReLU, MaxPool2d; 112896 multiply-adds per image\nstage 1 (rank 1): Conv2d 16-32 3x3, ReLU, MaxPool2d, Flatten; 903168 multiply-adds per image\nstage 2 (rank 2): Linear 1568-10; 15680 multiply-adds per image' "stages"
expect_eq 30 "$(losses "$out" | wc -l)" "loss lines"
pipeline_accuracy=$(accuracy "$out")
[[ -n "$pipeline_accuracy" ]] || fail "expected rank 0's final accuracy on 3 ranks, got: $out"
expect_contains "$out" "# throughput" "submit output"
run_dir=$(ls -d "$work"/runs/pytorch-pipeline-* | tail -1)
expect_eq 30 "$(grep -c '"type":"step",.*"samples":128,' "$run_dir/rank-00000.jsonl")" "rank 0's step records of 128 samples"
expect_eq 30 "$(grep -c '"type":"step",.*"samples":0,' "$run_dir/rank-00002.jsonl")" "rank 2's step records of 0 samples"
pipeline_out=$out

echo "== the data-parallel sibling: examples/pytorch-ddp on 2 ranks"
command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 1 \
  --steps-per-epoch 30 --log-every 10 --no-checkpoint)
ddp=$("$DTRAIN" submit pytorch-ddp.yaml --set "command=$command" 2>&1) || fail "the pytorch-ddp run exited $?: $ddp"
python3 - "$(train_loss "$ddp")" "$(train_loss "$pipeline_out")" "$(accuracy "$ddp")" "$pipeline_accuracy" <<'PY'
# The same samples in every global batch and the same mean loss, the gradient summed in another
# order (DDP's two halves, then its allreduce): the same training up to rounding.
import sys
l_ddp, l_pipe, a_ddp, a_pipe = map(float, sys.argv[1:])
assert abs(l_ddp - l_pipe) <= 0.005 * l_ddp, f"train loss {l_pipe} vs pytorch-ddp's {l_ddp}; expected within 0.5 %"
assert abs(a_ddp - a_pipe) <= 1.0, f"test accuracy {a_pipe} % vs pytorch-ddp's {a_ddp} %; expected within 1 point"
print(f"pipeline against pytorch-ddp: train loss {l_pipe} vs {l_ddp}, test accuracy {a_pipe} % vs {a_ddp} %")
PY
echo PASS
