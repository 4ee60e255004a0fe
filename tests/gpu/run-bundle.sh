#!/usr/bin/env bash
# run.sh of a GPU test bundle (tests/gpu/make-bundle.sh): runs dtrain's GPU tests on a machine with
# a GPU whose NCCL and CUDA runtime are pip wheels (site-packages/nvidia/*/lib of the venv in
# DTRAIN_BUNDLE_VENV, default /opt/torch/.venv) or a CUDA install (/usr/local/cuda/lib64). Each
# test binary runs alone, one rank on one GPU, no launcher (libdtrain's single bootstrap), NCCL on
# loopback. Exits non-zero when a test fails, a library cannot be loaded, or a test skipped while
# nvidia-smi lists a GPU; without a GPU the device tests skip and the rest must pass.
#   env -i PATH=/usr/bin:/bin BUNDLE/run.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${DTRAIN_BUNDLE_VENV:-/opt/torch/.venv}
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

libpath=$here/lib
shopt -s nullglob
for d in "$venv"/lib/python3*/site-packages/nvidia/*/lib "$venv"/lib/python3*/site-packages/nvidia/*/lib64; do
  libpath+=:$d
done
shopt -u nullglob
[[ -d /usr/local/cuda/lib64 ]] && libpath+=:/usr/local/cuda/lib64
export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN
# One process, no launcher: libdtrain picks its single bootstrap (no MPI, no PMIx at run time).
unset DTRAIN_BOOTSTRAP PMIX_NAMESPACE PMIX_RANK OMPI_COMM_WORLD_SIZE PMI_SIZE PMI_RANK \
  MV2_COMM_WORLD_SIZE MASTER_ADDR MASTER_PORT RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

needed=$(cat "$here/glibc-needed")
have=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
echo "glibc: this machine $have, the bundle needs $needed"
if [[ $(printf '%s\n' "$needed" "$have" | sort -V | head -1) != "$needed" ]]; then
  echo "FAIL: glibc $have is older than the $needed the bundle was built against"
  exit 1
fi

echo "== nvidia-smi -L"
gpus=$(nvidia-smi -L 2>&1)
echo "$gpus"
have_gpu=0
grep -q '^GPU [0-9]' <<<"$gpus" && have_gpu=1

for b in "$here"/bin/*; do
  missing=$(ldd "$b" | grep 'not found')
  [[ -z $missing ]] || fail "$(basename "$b") cannot load: $missing"
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in nccl_smoke_test nccl_comm_test; do
  echo "== $t"
  "$here/bin/$t" --gtest_brief=0 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  ((rc == 0)) || fail "$t exited with status $rc"
  grep -q '^\[  PASSED  \]' "$log" || fail "$t printed no PASSED line"
  skipped=$(grep -E '^\[  SKIPPED \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+ \(' "$log" | sed 's/^\[  SKIPPED \] //')
  if [[ -n $skipped ]]; then
    if ((have_gpu)); then
      fail "$t skipped while nvidia-smi lists a GPU: $(paste -sd' ' <<<"$skipped")"
    else
      echo "(no GPU: $t skipped $(wc -l <<<"$skipped") test(s), as expected)"
    fi
  fi
done

echo "== dtrain --version, and the NCCL that libdtrain loads (dtrain doctor)"
"$here/bin/dtrain" --version || fail "dtrain --version failed"
nccl=$("$here/bin/dtrain" doctor 2>&1 | tee "$log" | sed -n 's/^nccl  *//p')
cat "$log"
if ((have_gpu)) && [[ $nccl != [0-9]* ]]; then fail "dtrain doctor: nccl: '$nccl'"; fi

if ((status != 0)); then
  echo "RESULT: FAIL"
elif ((have_gpu)); then
  echo "RESULT: PASS on $(head -1 <<<"$gpus"), NCCL $nccl"
else
  echo "RESULT: PASS without a GPU (device tests skipped)"
fi
exit $status
