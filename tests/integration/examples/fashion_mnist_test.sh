#!/usr/bin/env bash
# The Fashion-MNIST example, shortened to a fraction of an epoch, through `dtrain submit` on the
# local site: 1 and 2 ranks with the same global batch and seed train the same model (loss curves
# within the tolerances of docs/examples.md), the accuracy is printed per epoch, every step is
# metered, `dtrain stats` compares the two runs, a SIGUSR1 stops both ranks at the same step with a
# checkpoint and a resubmission resumes to exactly the uninterrupted result; missing or damaged
# data is reported by name; the mlp trains too, and options of the other model are refused.
set -euo pipefail
DTRAIN=$1 TRAIN=$2 SRC=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir fmnist-test
cp "$SRC/examples/fashion-mnist/job.yaml" job.yaml
# A record per step (docs/metrics.md, "Detail"): the checks below count them.
printf 'env:\n  DTRAIN_RECORDS: steps\n' >> job.yaml

echo "== the cluster specs render"
out=$("$DTRAIN" plan "$SRC/examples/fashion-mnist/slurm.yaml" 2>&1) || fail "plan slurm.yaml exited $?: $out"
for line in "#SBATCH --nodes=2" "#SBATCH --ntasks-per-node=2" "#SBATCH --signal=B:USR1@60" "#SBATCH --requeue" \
  "dtrain-fashion-mnist --epochs 5 --global-batch 128"; do
  expect_contains "$out" "$line" "slurm.yaml plan"
done
out=$("$DTRAIN" plan "$SRC/examples/fashion-mnist/polaris.yaml" 2>&1) || fail "plan polaris.yaml exited $?: $out"
for line in "#PBS -l select=2:system=polaris" "#PBS -A MyProj" "#PBS -l filesystems=home:eagle" "#PBS -r y" \
  "dtrain-fashion-mnist --epochs 5 --global-batch 128"; do
  expect_contains "$out" "$line" "polaris.yaml plan"
done

short=(--epochs 2 --steps-per-epoch 60 --warmup-steps 20 --log-every 1)
command_for() { yaml_command "$TRAIN" "$@"; }
losses() { sed -n 's/^step \([0-9]*\) loss \([0-9.]*\) .*/\1 \2/p' <<< "$1"; }

echo "== 1 rank and 2 ranks, global batch 128, seed 2026, 60 steps per epoch"
for ranks in 1 2; do
  out=$("$DTRAIN" submit job.yaml --set ranks_per_node=$ranks \
    --set "command=$(command_for "${short[@]}" --no-checkpoint)" 2>&1) ||
    fail "submit with $ranks ranks exited $?: $out"
  printf '%s\n' "$out" > "out-$ranks.txt"
  expect_contains "$out" "fashion-mnist: $ranks ranks, 60000 training images (60 steps/epoch of global batch 128, $((128 / ranks)) per rank), 10000 test images" "header"
  for epoch in 1 2; do
    grep -qE "^epoch $epoch/2: train loss [0-9.]+, test accuracy [0-9.]+ %" <<< "$out" ||
      fail "expected rank 0 to print epoch $epoch's test accuracy, got: $out"
  done
  expect_eq 120 "$(losses "$out" | wc -l)" "loss lines of the $ranks-rank run"
  expect_contains "$out" "# throughput" "submit output"
  run_dir=$(ls -d "$work"/runs/fashion-mnist-* | tail -1)
  mv "$run_dir" "$work/runs/r$ranks"
  for ((r = 0; r < ranks; r++)); do
    f="$work/runs/r$ranks/rank-0000$r.jsonl"
    expect_eq 120 "$(grep -c '"type":"step"' "$f")" "step records in $f"
    expect_eq 120 "$(grep -c "\"samples\":$((128 / ranks)),\"seconds\"" "$f")" "records of $((128 / ranks)) samples in $f"
  done
done

python3 - "$work/out-1.txt" "$work/out-2.txt" <<'PY'
# Same global batch, same samples per step (DistributedSampler semantics), averaged gradients:
# only the order of floating-point sums differs, and SGD with momentum amplifies that slowly.
# Tolerances (docs/examples.md): the first 30 steps within 1e-5 of each other (the printed
# precision is 1e-6); means over windows of 20 steps within 3 %; test accuracy within 1 point.
import re, sys
def read(path):
    text = open(path).read()
    loss = [float(m.group(1)) for m in re.finditer(r"^step \d+ loss ([0-9.]+)", text, re.M)]
    acc = [float(m.group(1)) for m in re.finditer(r"test accuracy ([0-9.]+) %", text)]
    return loss, acc
(l1, a1), (l2, a2) = read(sys.argv[1]), read(sys.argv[2])
assert len(l1) == len(l2) == 120, (len(l1), len(l2))
early = max(abs(x - y) for x, y in zip(l1[:30], l2[:30]))
assert early <= 1e-5, f"first 30 steps: the losses differ by up to {early}; expected <= 1e-5"
worst = 0.0
for i in range(0, 120, 20):
    m1, m2 = sum(l1[i:i + 20]) / 20, sum(l2[i:i + 20]) / 20
    assert abs(m1 - m2) <= 0.03 * m1, f"steps {i + 1}-{i + 20}: mean loss {m1} vs {m2}; expected within 3 %"
    worst = max(worst, abs(m1 - m2) / m1)
assert len(a1) == len(a2) == 3, (a1, a2)  # two epochs and the final line
for x, y in zip(a1, a2):
    assert abs(x - y) <= 1.0, f"test accuracy {x} % vs {y} %; expected within 1 point"
assert a1[-1] >= 70.0, f"after 120 steps the 1-rank model reaches {a1[-1]} %; expected >= 70 %"
print(f"loss curves agree: first 30 steps within {early:.1e}, 20-step means within {100 * worst:.2f} %; "
      f"accuracies {a1} vs {a2}")
PY

echo "== dtrain stats over both runs"
stats=$("$DTRAIN" stats "$work/runs/r1" "$work/runs/r2" 2>&1) || fail "dtrain stats exited $?: $stats"
echo "$stats"
expect_contains "$stats" "speedup" "scaling table"

echo "== SIGUSR1 mid-run: both ranks stop at the same step with a checkpoint; a resubmission resumes"
long=(--epochs 2 --steps-per-epoch 150 --warmup-steps 20 --log-every 1)
out=$("$DTRAIN" submit job.yaml --set "command=$(command_for "${long[@]}" --checkpoint-dir "$work/ck-full")" 2>&1) ||
  fail "uninterrupted run exited $?: $out"
full=$(losses "$out")
full_final=$(grep '^final test accuracy' <<< "$out")
expect_eq 300 "$(wc -l <<< "$full")" "loss lines of the uninterrupted run"

submit_and_preempt "$work" "$(command_for "${long[@]}" --checkpoint-dir "$work/ck")" stopped.txt
expect_stopped "$work" 300
expect_eq "$(basename "$ckpt")" "$(cat "$work/ck/latest")" "the latest pointer"
expect_resumed "$(command_for "${long[@]}" --checkpoint-dir "$work/ck")" "$full"
expect_contains "$out" "resumed from $ckpt at epoch 1, step $stop_step" "resumed run"
expect_eq "$full_final" "$(grep '^final test accuracy' <<< "$out")" "final accuracy after resuming"
echo "stopped at step $stop_step, resumed, and matched the uninterrupted run bit for bit"
out=$("$TRAIN" "${long[@]}" --global-batch 64 --checkpoint-dir "$work/ck" 2>&1) && status=0 || status=$?
expect_eq 1 "$status" "exit status when resuming with another batch ($out)"
expect_contains "$out" "saved by a run with --global-batch 128 --seed 2026; expected --global-batch 64 --seed 2026" "message"

echo "== the mlp instead of the cnn; options of the model not trained are refused"
out=$("$TRAIN" --model mlp --hidden 64,32 --epochs 1 --steps-per-epoch 20 --log-every 10 --no-checkpoint 2>&1) ||
  fail "mlp run exited $?: $out"
expect_contains "$out" "(20 steps/epoch of global batch 128, 128 per rank), 10000 test images, model mlp 64,32, 1 epoch, seed" "mlp header"
expect_contains "$out" "final test accuracy" "mlp run"
for args in "--hidden 64" "--model mlp --channels 4,8" "--channels 4" "--channels 4,x" "--model rnn"; do
  set +e
  # shellcheck disable=SC2086 # the words of $args are separate options
  out=$("$TRAIN" $args --no-checkpoint 2>&1)
  status=$?
  set -e
  expect_eq 2 "$status" "exit status of $args ($out)"
  case $args in
  "--hidden 64") expect_contains "$out" "--hidden: sets the widths of --model mlp; this run trains --model cnn" "message" ;;
  "--model mlp --channels 4,8") expect_contains "$out" "--channels: sets the channels of --model cnn; this run trains --model mlp" "message" ;;
  "--channels 4") expect_contains "$out" "--channels: expected the two convolutions' channel counts, e.g. 8,16, got \"4\"" "message" ;;
  "--channels 4,x") expect_contains "$out" "--channels: expected numbers 1-1024 separated by commas, got \"4,x\"" "message" ;;
  "--model rnn") expect_contains "$out" "--model: rnn not in {cnn,mlp}" "message" ;;
  esac
done

echo "== missing and damaged data"
out=$("$TRAIN" --data "$work/nothing" --no-checkpoint 2>&1) && status=0 || status=$?
expect_eq 1 "$status" "exit status without data ($out)"
expect_contains "$out" "$work/nothing/train-images-idx3-ubyte.gz: no such file" "message"
expect_contains "$out" "dataset-fashion-mnist" "message names the package"
mkdir bad
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  printf 'not an idx file' | gzip > "bad/$f.gz"
done
out=$("$TRAIN" --data "$work/bad" --no-checkpoint 2>&1) && status=0 || status=$?
expect_eq 1 "$status" "exit status with damaged data ($out)"
expect_contains "$out" "$work/bad/train-images-idx3-ubyte.gz: bad IDX magic number; expected 0x00000803" "message"
echo PASS
