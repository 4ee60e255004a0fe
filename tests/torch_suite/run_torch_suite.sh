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

# The run takes long and every test imports the module afresh: it runs a copy of the build's
# module and library, taken under the build lock (/tmp/dtrain-build.lock, which builds of the
# shared tree hold), so that a rebuild meanwhile neither half-links what a test loads nor changes
# what is measured. LD_LIBRARY_PATH wins over the modules' RUNPATH (the build's lib/).
snap=$(mktemp -d "${TMPDIR:-/tmp}/torch-suite-build.XXXXXX")
trap 'rm -rf "$snap"' EXIT
mkdir -p "$snap/python" "$snap/lib"
flock /tmp/dtrain-build.lock cp -a "$build/python/dtrain" "$build"/lib/libdtrain.so* "$snap/"
mv "$snap/dtrain" "$snap/python/" && mv "$snap"/libdtrain.so* "$snap/lib/"
export LD_LIBRARY_PATH=$snap/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$snap/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
# A collective that hangs fails after 60 s naming the missing ranks (libdtrain's deadline where
# the test gives the group none), well before torch's per-test limit (150 s here).
export DTRAIN_TIMEOUT=${DTRAIN_TIMEOUT:-60}
nice -n 5 "$python" "$here/run_torch_suite.py" "$@"
