#!/usr/bin/env bash
# libdtrain loads NCCL and the CUDA runtime with dlopen (runtime/comm/transport/nccl/nccl_library.cpp), so neither
# it nor bin/dtrain may need a CUDA library to start: none among their NEEDED entries or in ldd's
# closure, and `dtrain --version` and a C program using libdtrain (init, collectives) run with a
# library path that holds no CUDA while the dynamic loader (LD_DEBUG=files) opens no CUDA file.
#   no_cuda_needed_test.sh LIBDTRAIN DTRAIN C_PROGRAM
set -euo pipefail
lib=$1 dtrain=$2 program=$3
cuda_re='lib(nccl|cudart|cuda)\.so'
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
for f in "$lib" "$dtrain"; do
  needed=$(readelf -d "$f" | grep NEEDED || true)
  [[ -n $needed ]] || fail "readelf -d $f lists no NEEDED entry at all"
  if grep -E "$cuda_re" <<<"$needed"; then fail "$f has a NEEDED CUDA library"; fi
  closure=$(ldd "$f")
  grep -q 'libstdc++' <<<"$closure" || fail "ldd $f does not list libstdc++: $closure"
  if grep -E "$cuda_re" <<<"$closure"; then fail "ldd $f loads a CUDA library"; fi
  echo "ok: $(basename "$f"): NEEDED $(awk -F'[][]' '{print $2}' <<<"$needed" | paste -sd' ')"
done

# Run PROGRAM ARGS... with no CUDA directory on the library path; the loader's file log must show
# libdtrain opened and no CUDA library.
run_without_cuda() {
  local log out
  log=$(mktemp)
  out=$(LD_LIBRARY_PATH=/nonexistent LD_DEBUG=files LD_DEBUG_OUTPUT=$log "$@" 2>&1) ||
    fail "$* failed without CUDA on the library path: $out"
  local files
  files=$(cat "$log".* 2>/dev/null)
  rm -f "$log" "$log".*
  grep -q 'file=libdtrain\.so' <<<"$files" || fail "LD_DEBUG shows no libdtrain for $*: $files"
  if grep -E "file=$cuda_re" <<<"$files"; then fail "$* loaded a CUDA library"; fi
  printf '%s\n' "$out"
}
version=$(run_without_cuda "$dtrain" --version)
[[ $version == "dtrain "[0-9]* ]] || fail "dtrain --version printed: $version"
echo "ok: $version, no CUDA library loaded"
run_without_cuda "$program" >/dev/null
echo "ok: $(basename "$program") ran on libdtrain, no CUDA library loaded"
echo PASS
