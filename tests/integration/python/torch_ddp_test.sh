#!/usr/bin/env bash
# The same DDP program (torch_ddp_train.py) on 2 ranks with backend="gloo" and backend="dtrain",
# torchrun-style: every step's loss within 1e-4 relative of gloo's, and identical parameters on
# every rank (DDP's promise, which dtrain's same-bits reductions keep).
#   torch_ddp_test.sh PYTHON TCP_LAUNCH RANKS STEPS
set -euo pipefail
python=$1 launch=$2 ranks=$3 steps=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for backend in gloo dtrain; do
  mkdir "$tmp/$backend"
  bash "$launch" "$ranks" "$python" "$here/torch_ddp_train.py" "$backend" "$tmp/$backend" "$steps"
done
"$python" - "$tmp" "$ranks" "$steps" <<'PY'
import sys
import torch
tmp, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {b: [torch.load(f"{tmp}/{b}/rank-{r}.pt") for r in range(ranks)] for b in ("gloo", "dtrain")}
worst = 0.0
for g, d in zip(runs["gloo"][0]["losses"], runs["dtrain"][0]["losses"]):
    worst = max(worst, abs(g - d) / max(abs(g), 1e-12))
print(f"{steps} steps on {ranks} ranks: loss gloo {runs['gloo'][0]['losses'][0]:.6f} -> "
      f"{runs['gloo'][0]['losses'][-1]:.6f}, dtrain {runs['dtrain'][0]['losses'][0]:.6f} -> "
      f"{runs['dtrain'][0]['losses'][-1]:.6f}; largest relative difference {worst:.2e}")
assert len(runs["dtrain"][0]["losses"]) == steps
assert worst <= 1e-4, f"dtrain's losses differ from gloo's by {worst:.2e} relative; expected <= 1e-4"
for r in range(1, ranks):
    for p0, pr in zip(runs["dtrain"][0]["params"], runs["dtrain"][r]["params"]):
        assert torch.equal(p0, pr), f"rank {r}'s parameters differ from rank 0's under dtrain"
print("PASS: same training as gloo, identical parameters on every rank")
PY
