#!/usr/bin/env bash
# examples/pytorch-ddp with backend "dtrain" by a flag only (--backend dtrain), through
# `dtrain submit` on the local site (framework: torch, 2 ranks, real mpirun): the same short run
# with gloo and with dtrain prints the same loss at every step and the same test accuracy (2 ranks:
# each sum has one addition, the same in both backends).
#   pytorch_ddp_backend_test.sh DTRAIN SRC BUILD
set -euo pipefail
DTRAIN=$1 SRC=$2 BUILD=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
enter_workdir ddp-backend-test
sed -e "s|PYTHONPATH: build/python|PYTHONPATH: $BUILD/python|" \
    -e "s|examples/pytorch-ddp/train.py|$SRC/examples/pytorch-ddp/train.py|" \
    "$SRC/examples/pytorch-ddp/job.yaml" > job.yaml
losses() { sed -n 's/^\(.* \)\?step \([0-9]*\) loss \([0-9.]*\)$/\2 \3/p' <<< "$1"; }
declare -A loss final
for backend in gloo dtrain; do
  command=$(yaml_command "/usr/bin/python3, $SRC/examples/pytorch-ddp/train.py" --epochs 1 \
    --steps-per-epoch 40 --log-every 1 --no-checkpoint --backend "$backend")
  out=$("$DTRAIN" submit job.yaml --set "command=$command" 2>&1) ||
    fail "the run with --backend $backend exited $?: $out"
  expect_contains "$out" "seed 2026, backend $backend" "header of the $backend run"
  loss[$backend]=$(losses "$out")
  expect_eq 40 "$(wc -l <<< "${loss[$backend]}")" "loss lines of the $backend run"
  final[$backend]=$(grep -o 'final test accuracy .*' <<< "$out") || fail "no final accuracy in: $out"
  echo "$backend: $(tail -n 1 <<< "${loss[$backend]}" | cut -d' ' -f2) at step 40, ${final[$backend]}"
done
expect_eq "${loss[gloo]}" "${loss[dtrain]}" "every step's loss, dtrain against gloo"
expect_eq "${final[gloo]}" "${final[dtrain]}" "final accuracy, dtrain against gloo"
echo PASS
