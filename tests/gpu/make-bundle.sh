#!/usr/bin/env bash
# Packs dtrain's GPU tests to run on a machine that has a GPU, its driver, NCCL and the CUDA runtime
# but none of dtrain's other dependencies (no hwloc, PMIx, Open MPI, yaml-cpp): the lent GPU
# machine, whose NCCL and CUDA runtime are pip wheels in a Python venv. libdtrain loads NCCL with
# dlopen, so the bundle carries everything else the binaries need and takes CUDA from the machine.
#   make-bundle.sh OUTDIR [BUILD_DIR]   (BUILD_DIR: build-test at the repository root)
# OUTDIR/bin: nccl_smoke_test, nccl_comm_test and dtrain, debug information stripped;
# OUTDIR/lib: every shared library they load (ldd) except glibc's own and CUDA's (libcuda,
# libcudart, libnccl), which must match the machine; OUTDIR/run.sh runs the tests there:
#   env -i PATH=/usr/bin:/bin OUTDIR/run.sh
set -euo pipefail
(($# == 1 || $# == 2)) || {
  echo "usage: make-bundle.sh OUTDIR [BUILD_DIR]" >&2
  exit 2
}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$1 build=${2:-$src/build-test}
bins=("$build/tests/gpu/nccl_smoke_test" "$build/tests/gpu/nccl_comm_test" "$build/bin/dtrain")
for b in "${bins[@]}"; do
  [[ -x $b ]] || {
    echo "make-bundle.sh: $b is not built; build the targets nccl_smoke_test nccl_comm_test and" \
      "dtrain in $build first (the CUDA and NCCL headers must be found)" >&2
    exit 1
  }
done
# glibc's libraries and the dynamic loader come from the machine, as do CUDA's.
machine_libs='^(linux-vdso|ld-linux[-_a-z0-9]*|libc|libm|libpthread|libdl|librt|libutil|libresolv|libanl|libnsl|libmvec|libcuda|libcudart|libnccl)\.so'

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
declare -A copied=()
for b in "${bins[@]}"; do
  cp "$b" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$b")"
  # "libx.so.1 => /path/libx.so.1.2 (0x...)": copy the file under the name that was asked for.
  while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    [[ $name =~ $machine_libs ]] && continue
    [[ $path == /* ]] || {
      echo "make-bundle.sh: ldd $b: $name not found here" >&2
      exit 1
    }
    [[ -n ${copied[$name]:-} ]] && continue
    cp -L "$path" "$out/lib/$name"
    chmod u+w "$out/lib/$name"
    strip --strip-debug "$out/lib/$name"
    copied[$name]=$path
  done < <(ldd "$b")
done
# The newest glibc symbol version anything here needs; run.sh compares it with the machine's.
glibc=$(for f in "$out"/bin/* "$out"/lib/*; do objdump -T "$f"; done |
  grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "$glibc" >"$out/glibc-needed"
cp "$src/tests/gpu/run-bundle.sh" "$out/run.sh"
chmod +x "$out/run.sh"
echo "make-bundle.sh: $out: $(ls "$out/bin" | paste -sd' '); ${#copied[@]} libraries" \
  "($(ls "$out/lib" | paste -sd' ')); needs glibc >= $glibc; $(du -sh "$out" | cut -f1)"
