#!/usr/bin/env bash
# torch 1.13's own distributed tests, gloo against dtrain (run_torch_suite.py; docs/torch.md,
# "torch's own test suite"). With Debian's interpreter (torch 1.13 is its), dtrain.torch from the
# build tree, at nice 5 (the machine is shared), one world size after the other.
#   run_torch_suite.sh BUILD_DIR [run_torch_suite.py's arguments: --world-sizes 2,3 ...]
set -euo pipefail
build=${1:?usage: run_torch_suite.sh BUILD_DIR [--world-sizes 2,3] [--pattern RE]...}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${DTRAIN_PYTHON:-/usr/bin/python3}
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
# A collective that hangs fails after 60 s naming the missing ranks (libdtrain's deadline where
# the test gives the group none), well before torch's per-test limit (150 s here).
export DTRAIN_TIMEOUT=${DTRAIN_TIMEOUT:-60}
exec nice -n 5 "$python" "$here/run_torch_suite.py" "$@"
