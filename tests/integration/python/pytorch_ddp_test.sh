#!/usr/bin/env bash
# examples/pytorch-ddp through `dtrain submit` on the local site (framework: torch, 2 ranks, real
# mpirun): the model reaches 85 % test accuracy, every step is metered and `dtrain stats` shows the
# throughput, a SIGUSR1 stops both ranks at the same step with a checkpoint (exit status 85), and
# a resubmission resumes to exactly the uninterrupted run's losses and accuracy.
#   pytorch_ddp_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
/usr/bin/python3 -c "import torch" 2>/dev/null ||
  fail "Debian's python3-torch is not installed (scripts/install-deps installs it)"
enter_workdir ddp-test
# The shipped spec, with this build's module, the example by absolute path and a record per step
# (docs/metrics.md, "Detail"): the checks below count them.
sed -e "s|PYTHONPATH: build/python|PYTHONPATH: $BUILD/python|" \
    -e "s|examples/pytorch-ddp/train.py|$SRC/examples/pytorch-ddp/train.py|" \
    -e "s|^env:|env:\n  DTRAIN_RECORDS: steps|" \
    "$SRC/examples/pytorch-ddp/job.yaml" > job.yaml
grep -q "PYTHONPATH: $BUILD/python" job.yaml || fail "job.yaml: no PYTHONPATH line to point at the build"

args=(--epochs 2 --steps-per-epoch 300 --log-every 1)
command_for() { yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" "$@"; }
losses() { sed -n 's/^\(.* \)\?step \([0-9]*\) loss \([0-9.]*\)$/\2 \3/p' <<< "$1"; }

echo "== one epoch is \"1 epoch\" (issue 35, item 5)"
out=$("$DTRAIN" submit job.yaml --set "command=$(command_for --epochs 1 --steps-per-epoch 3 --checkpoint-dir "$work/ck-one")" 2>&1) ||
  fail "1-epoch run exited $?: $out"
expect_contains "$out" " test images, 1 epoch, seed " "header of a 1-epoch run"
expect_contains "$out" " % after 1 epoch on 2 ranks" "final line of a 1-epoch run"
rm -rf "$work"/runs/pytorch-ddp-*

echo "== uninterrupted: 2 epochs of 300 steps of global batch 128"
out=$("$DTRAIN" submit job.yaml --set "command=$(command_for "${args[@]}" --checkpoint-dir "$work/ck-full")" 2>&1) ||
  fail "uninterrupted run exited $?: $out"
echo "$out" | grep -vE '^(.* )?step [0-9]+ loss'
expect_contains "$out" "pytorch-ddp: 2 ranks (pmix), 60000 training images (300 steps/epoch of global batch 128, 64 per rank), 10000 test images" "header"
full=$(losses "$out")
expect_eq 600 "$(wc -l <<< "$full")" "loss lines of the uninterrupted run"
full_final=$(grep -o 'final test accuracy .*' <<< "$out") || fail "no final accuracy in: $out"
accuracy=$(sed 's/final test accuracy \([0-9.]*\) %.*/\1/' <<< "$full_final")
python3 -c "import sys; a = float(sys.argv[1]); assert a >= 85.0, f'test accuracy {a} %; expected >= 85 %'" "$accuracy" ||
  fail "accuracy"
expect_contains "$out" "# throughput" "submit output"
run_dir=$(ls -d "$work"/runs/pytorch-ddp-* | tail -1)
for r in 0 1; do
  expect_eq 600 "$(grep -c '"type":"step","time":[0-9.]*,"rank":'$r',"step":[0-9]*,"samples":64,' "$run_dir/rank-0000$r.jsonl")" \
    "step records of 64 samples in rank $r's records"
done
stats=$("$DTRAIN" stats "$run_dir" 2>&1) || fail "dtrain stats exited $?: $stats"
echo "$stats"
expect_contains "$stats" "samples/s" "dtrain stats"

echo "== SIGUSR1 mid-run: both ranks stop at the same step with a checkpoint; a resubmission resumes"
submit_and_preempt "$work" "$(command_for "${args[@]}" --checkpoint-dir "$work/ck")" stopped.txt
expect_stopped "$work" 600
expect_resumed "$(command_for "${args[@]}" --checkpoint-dir "$work/ck")" "$full"
expect_contains "$out" "resumed from $ckpt at epoch $(((stop_step - 1) / 300)), step $stop_step" "resumed run"
expect_eq "$full_final" "$(grep -o 'final test accuracy .*' <<< "$out")" "final accuracy after resuming"
echo "stopped at step $stop_step, resumed, and matched the uninterrupted run exactly ($full_final)"
echo PASS
