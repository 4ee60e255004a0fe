#!/usr/bin/env bash
# C++ and Python ranks in one job (mpirun's MPMD form) share checkpoints: whichever language rank
# 0 runs, its data is what every rank loads, and each rank gets back its own blob, then the other
# order resumes from the first run's directory with a newer step.
#   mixed_checkpoint_test.sh MPIRUN PYTHON PEER_PY PEER_CXX
set -euo pipefail
mpirun=$1 python=$2 peer_py=$3 peer_cxx=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
run() {  # step first second -> the two ranks' lines
  local step=$1 first=$2 second=$3
  local -A cmd=([Python]="$python $peer_py $dir/ckpt $step" [C++]="$peer_cxx $dir/ckpt $step")
  # shellcheck disable=SC2086 # each command is its words
  timeout -k 10 120 "$mpirun" --allow-run-as-root --oversubscribe -n 1 ${cmd[$first]} : -n 1 ${cmd[$second]}
}
out=$(run 10 Python C++ 2>&1) || fail "Python rank 0, C++ rank 1 exited $?: $out"
echo "$out"
grep -qx 'Python rank 0: step 10, data "shared from Python rank 0", rank_data "blob of Python rank 0", saved_world 2' <<< "$out" || fail "rank 0 (Python)"
grep -qx 'C++ rank 1: step 10, data "shared from Python rank 0", rank_data "blob of C++ rank 1", saved_world 2' <<< "$out" || fail "rank 1 (C++)"
out=$(run 11 C++ Python 2>&1) || fail "C++ rank 0, Python rank 1 exited $?: $out"
echo "$out"
grep -qx 'C++ rank 0: step 11, data "shared from C++ rank 0", rank_data "blob of C++ rank 0", saved_world 2' <<< "$out" || fail "rank 0 (C++)"
grep -qx 'Python rank 1: step 11, data "shared from C++ rank 0", rank_data "blob of Python rank 1", saved_world 2' <<< "$out" || fail "rank 1 (Python)"
echo "mixed_checkpoint_test: PASS"
