#!/usr/bin/env bash
# The GPU checks of dtrain in one run on a lent GPU machine (the device tool), whose image has a GPU,
# CUDA, a python3 with torch, CuPy, pybind11 and pytest, and NCCL as pip wheels, but none of
# libdtrain's build dependencies (MPI, PMIx, hwloc, yaml-cpp). So libdtrain comes built from here
# in a bundle (make-bundle.sh), and only what must match the machine's Python is compiled there.
#
# Here, before the run (the bundle travels as an ignored folder of the repository, in `carry`):
#   cmake --build build --target nccl_smoke_test nccl_comm_test dtrain
#   tests/gpu/make-bundle.sh .gpu-bundle build      (14 MiB; .gitignore ignores .gpu-bundle/)
# On the machine, from the repository root (run: command "bash tests/gpu/device_check.sh
#   .gpu-bundle", carry [".gpu-bundle"], timeout_s 540):
#   1. the bundle's run.sh: nccl_smoke_test, nccl_comm_test (C++, libdtrain's NCCL loader and
#      device_comm()), dtrain doctor;
#   2. the Python module compiled for the machine's python3 against the bundle's libdtrain, then
#      tests/unit/python/device_comm_test.py (device_comm() from Python, exact on one rank) and
#      tests/integration/python/device_two_ranks.py under tcp_launch.sh 2 (skips with one GPU);
#   3. dtrain.torch compiled against the machine's torch (if it has CUDA) and
#      tests/unit/python/torch_cuda_test.py; a compile failure is reported, with its first errors.
# Prints one line per step and RESULT: PASS or FAIL; exits non-zero on a failure. The whole run
# keeps within 7.5 minutes (below; here, on 2 cores without a GPU, steps 1 and 2 took 30 s);
# DTRAIN_DEVICE_PYTHON names another python3, DTRAIN_DEVICE_JOBS the compilers at once (nproc).
set -uo pipefail
(($# == 1)) || {
  echo "usage: device_check.sh BUNDLE (made by tests/gpu/make-bundle.sh)" >&2
  exit 2
}
# The output also goes to $OUT/device_check.log where the device tool gives an $OUT: it comes back
# even when the run is stopped at its limit. (The script runs again under tee rather than through
# `exec > >(tee ...)`: a plain `wait` below would wait for that process substitution too.)
if [[ -n ${OUT:-} && -d ${OUT:-} && -z ${DTRAIN_DEVICE_TEED:-} ]]; then
  DTRAIN_DEVICE_TEED=1 bash "${BASH_SOURCE[0]}" "$@" 2>&1 | tee "$OUT/device_check.log"
  exit "${PIPESTATUS[0]}"
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bundle=$(cd "$1" && pwd) || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=${DTRAIN_DEVICE_PYTHON:-python3}
# One budget for the whole run (DTRAIN_DEVICE_BUDGET seconds, default 450: 7.5 minutes), so that
# it ends inside the device tool's timeout_s 540 whatever hangs: each step's limit is its own cap
# or what is left, whichever is less.
end=$((SECONDS + ${DTRAIN_DEVICE_BUDGET:-450}))
limit() {
  local left=$((end - SECONDS))
  ((left < $1)) && echo $((left > 1 ? left : 1)) || echo "$1"
}
summary=()
status=0
note() { summary+=("$1"); }
failed() {
  note "FAIL: $1"
  status=1
}

echo "== 1. C++ GPU tests (the bundle's run.sh)"
if timeout $(limit 180) env -i PATH=/usr/bin:/bin:/usr/local/bin HOME="${HOME:-/root}" "$bundle/run.sh"; then
  note "PASS: C++ nccl_smoke_test, nccl_comm_test, dtrain doctor"
else
  failed "C++ GPU tests (bundle run.sh; output above)"
fi

# The libraries: the bundle's, except the C++ runtime, which the machine's python3 and torch
# already load in a newer version; NCCL and the CUDA runtime from the pip wheels.
mkdir -p "$work/lib" "$work/dtrain"
for f in "$bundle"/lib/*; do
  case $(basename "$f") in libstdc++* | libgcc_s*) ;; *) ln -s "$f" "$work/lib/" ;; esac
done
libdtrain=$(ls "$bundle"/lib/libdtrain.so* | head -1)
wheels=$("$py" -c 'import glob, site; print(":".join(glob.glob(site.getsitepackages()[0] + "/nvidia/*/lib")))')
export LD_LIBRARY_PATH=$work/lib:$wheels:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN PYTHONPATH=$work PYTHONDONTWRITEBYTECODE=1
unset DTRAIN_BOOTSTRAP PMIX_NAMESPACE PMIX_RANK OMPI_COMM_WORLD_SIZE PMI_SIZE PMI_RANK \
  MASTER_ADDR MASTER_PORT RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
cxx=${CXX:-c++}
# pybind11's and Python's headers: pip's pybind11 says where; Debian's pybind11-dev is in /usr/include.
read -ra pyinc < <("$py" -m pybind11 --includes 2>/dev/null ||
  "$py" -c 'import sysconfig; print("-I" + sysconfig.get_paths()["include"])')
max_jobs=${DTRAIN_DEVICE_JOBS:-$(nproc)}  # compilers at once
throttle() { while (($(jobs -rp | wc -l) >= max_jobs)); do wait -n; done; }
flags=(-std=c++20 -O1 -shared -fPIC -w -I"$root/runtime/include")

echo "== 2. the Python module for $("$py" --version 2>&1), against $libdtrain"
ext=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
version=$(sed -n 's/^project(dtrain VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
# One compiler per source, in parallel: the module compiles in well under a minute this way.
objs=()
for src in "$root"/python/src/*.cpp; do
  obj=$work/$(basename "$src" .cpp).o
  objs+=("$obj")
  throttle
  timeout $(limit 240) "$cxx" "${flags[@]}" "${pyinc[@]}" \
    -DDTRAIN_PYTHON_VERSION="\"$version\"" -c "$src" -o "$obj" &
done
wait
if timeout $(limit 60) "$cxx" -shared -o "$work/dtrain/_dtrain$ext" "${objs[@]}" "$libdtrain" \
  -Wl,-rpath,"$work/lib" 2>"$work/link.log"; then
  cp "$root"/python/dtrain/__init__.py "$root"/python/dtrain/__init__.pyi "$work/dtrain/"
  pytest=("$py" -m pytest -q -rs -p no:cacheprovider)
  if timeout $(limit 120) "${pytest[@]}" "$root/tests/unit/python/device_comm_test.py"; then
    note "PASS: Python device_comm_test.py (one rank; skips listed above)"
  else
    failed "Python device_comm_test.py"
  fi
  if timeout $(limit 120) bash "$root/tests/integration/runtime/tcp_launch.sh" 2 "${pytest[@]}" \
    "$root/tests/integration/python/device_two_ranks.py"; then
    note "PASS: Python device_two_ranks.py on 2 ranks (skipped with one GPU: see above)"
  else
    failed "Python device_two_ranks.py on 2 ranks"
  fi
else
  head -20 "$work/link.log"
  failed "the Python module did not build (compiler errors above)"
fi

echo "== 3. dtrain.torch's CUDA path"
if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  note "SKIP: dtrain.torch CUDA path: this python3's torch has no CUDA or sees no GPU"
elif [[ ! -e $work/dtrain/_dtrain$ext ]]; then
  note "SKIP: dtrain.torch CUDA path: no Python module (step 2 failed)"
else
  read -r tinc tlib < <("$py" -c 'from torch.utils import cpp_extension as c; import os
print(",".join(c.include_paths()), os.path.join(os.path.dirname(c.__file__), "..", "lib"))')
  abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
  tflags=()
  IFS=, read -ra dirs <<<"$tinc"
  for d in "${dirs[@]}"; do tflags+=(-isystem "$d"); done
  objs=()
  for src in "$root"/python/torch_backend/*.cpp "$root"/python/src/signal_check.cpp; do
    obj=$work/torch_$(basename "$src" .cpp).o
    objs+=("$obj")
    throttle
    timeout $(limit 300) "$cxx" "${flags[@]}" "${pyinc[@]}" -I"$root/python/src" \
      "${tflags[@]}" -D_GLIBCXX_USE_CXX11_ABI="$abi" -DTORCH_EXTENSION_NAME=_torch \
      -c "$src" -o "$obj" 2>"$obj.log" &
  done
  wait
  if timeout $(limit 60) "$cxx" -shared -o "$work/dtrain/_torch$ext" "${objs[@]}" "$libdtrain" \
    -L"$tlib" -ltorch -ltorch_cpu -lc10 -ltorch_python -Wl,-rpath,"$tlib" 2>"$work/tlink.log"; then
    cp "$root"/python/dtrain/torch.py "$root"/python/dtrain/torch.pyi "$work/dtrain/"
    timeout $(limit 120) "$py" -m pytest -q -rs -p no:cacheprovider \
      "$root/tests/unit/python/torch_cuda_test.py"
    case $? in
      0) note "PASS: dtrain.torch CUDA path (torch_cuda_test.py)" ;;
      5) note "SKIP: dtrain.torch CUDA path: torch_cuda_test.py skipped (its reason above)" ;;
      *) failed "dtrain.torch CUDA path (torch_cuda_test.py)" ;;
    esac
  else
    cat "$work"/torch_*.o.log "$work/tlink.log" 2>/dev/null | grep -m 15 -E 'error|undefined'
    note "NOT BUILT: dtrain.torch against torch $("$py" -c 'import torch; print(torch.__version__)')" \
      "(first errors above): its CUDA path is unchecked"
  fi
fi

echo "== summary"
printf '%s\n' "${summary[@]}"
((status == 0)) && echo "RESULT: PASS" || echo "RESULT: FAIL"
exit $status
