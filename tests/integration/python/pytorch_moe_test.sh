#!/usr/bin/env bash
# examples/pytorch-moe through `dtrain submit` on the local site (framework: torch, real mpirun,
# backend "dtrain"), shortened to 30 steps: 4 experts on 2 ranks (2 each) route the tokens
# unevenly (the counts rank 0 prints differ between experts and from step to step, and add up to
# the global batch) and train the model that 1 rank holding all 4 experts trains: every printed
# loss within 1 %, the epoch's training loss within 0.5 %, the accuracy within a point; experts
# that the ranks do not divide are refused.
#   pytorch_moe_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir moe-test
sed -e "s|PYTHONPATH: build/python|PYTHONPATH: $BUILD/python|" \
    -e "s|examples/pytorch-moe/train.py|$SRC/examples/pytorch-moe/train.py|" \
    "$SRC/examples/pytorch-moe/job.yaml" > job.yaml
grep -q "PYTHONPATH: $BUILD/python" job.yaml || fail "job.yaml: no PYTHONPATH line to point at the build"
command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-moe/train.py" --epochs 1 \
  --steps-per-epoch 30 --log-every 5 --experts 4)
for ranks in 1 2; do
  echo "== 4 experts on $ranks rank(s)"
  out=$("$DTRAIN" submit job.yaml --set ranks_per_node=$ranks --set "command=$command" 2>&1) ||
    fail "the $ranks-rank run exited $?: $out"
  echo "$out" | grep -E '^(.* )?(pytorch-moe:|step|epoch|final)'
  expect_contains "$out" "pytorch-moe: $ranks ranks (pmix), 4 experts ($((4 / ranks)) per rank, top-1, width 64, hidden 128), 60000 training images (30 steps/epoch of global batch 128, $((128 / ranks)) per rank), 10000 test images, 1 epoch, seed 2026, backend dtrain" "header"
  grep -qE "^(.* )?final test accuracy [0-9.]+ % after 1 epoch on $ranks ranks$" <<< "$out" ||
    fail "expected rank 0's final accuracy on $ranks ranks, got: $out"
  expect_contains "$out" "# throughput" "submit output"
  printf '%s\n' "$out" > "out-$ranks.txt"
done

python3 - "$work/out-1.txt" "$work/out-2.txt" <<'PY'
# Per token the same computation on 1 and 2 ranks; the shared parameters' gradient is averaged
# over the ranks and each expert's summed over the senders, so only the order of the sums
# differs, and training grows that slowly.
import re, sys
def read(path):
    text = open(path).read()
    steps = [(float(m.group(1)), [int(c) for c in m.group(2).split()])
             for m in re.finditer(r"step \d+ loss ([0-9.]+) tokens per expert ([0-9 ]+)$", text, re.M)]
    loss = float(re.search(r"epoch 1/1: train loss ([0-9.]+)", text).group(1))
    accuracy = float(re.search(r"final test accuracy ([0-9.]+) %", text).group(1))
    return steps, loss, accuracy
(s1, l1, a1), (s2, l2, a2) = read(sys.argv[1]), read(sys.argv[2])
assert len(s1) == len(s2) == 6, (s1, s2)
for (x, c1), (y, c2) in zip(s1, s2):
    assert abs(x - y) <= 0.01 * x, f"step losses {x} vs {y}; expected within 1 %"
    assert sum(c1) == sum(c2) == 128, f"tokens per expert {c1}, {c2}; expected 128 in all"
assert any(len(set(c)) > 1 for _, c in s2), f"every expert got as many tokens at every step: {s2}"
assert len({tuple(c) for _, c in s2}) > 1, f"the same split at every step: {s2}"
assert abs(l1 - l2) <= 0.005 * l1, f"train loss {l2} on 2 ranks vs {l1} on 1; expected within 0.5 %"
assert abs(a1 - a2) <= 1.0, f"test accuracy {a2} % on 2 ranks vs {a1} % on 1; expected within 1 point"
print(f"2 ranks against 1: train loss {l2} vs {l1}, test accuracy {a2} % vs {a1} %; "
      f"tokens per expert {[c for _, c in s2]}")
PY

echo "== refused: 4 experts on 3 ranks"
out=$("$DTRAIN" submit job.yaml --set ranks_per_node=3 --set "command=$command" 2>&1) &&
  fail "4 experts on 3 ranks ran: $out"
expect_contains "$out" "pytorch-moe: --experts: expected a multiple of the 3 ranks (each holds experts/ranks of them), got 4" "message"
echo PASS
