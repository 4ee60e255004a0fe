#!/usr/bin/env bash
# The same DDP program (torch_ddp_train.py) on 2 ranks with backend="gloo" and backend="dtrain",
# torchrun-style, checked by ddp_same_training.py: each rank's loss at every step within 1e-4
# relative of gloo's, and identical parameters on every rank.
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
"$python" "$here/ddp_same_training.py" "$tmp" "$ranks" "$steps"
