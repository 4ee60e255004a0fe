#!/usr/bin/env bash
# Builds dtrain's Debian package as it is shipped, in a build tree of its own: prefix /usr (so
# libraries go to the multiarch libdir, /usr/lib/x86_64-linux-gnu), Release flags with debug
# information that CPack strips, and with the NCCL backend when the CUDA and NCCL headers are found
# (/usr/local/cuda): libdtrain loads libnccl.so.2 and libcudart.so.<major> with dlopen when the
# device communicator is first used, so the package needs no CUDA library (none of them is in a
# Debian package) and starts on nodes without one.
# Environment: CMAKE_ARGS, more -D options, last (the tests pass their tree's -DDTRAIN_WERROR, so
# that with the compiler cache the package's objects are the test tree's).
# Where the torch backend is built (CMake found libtorch-dev and the interpreter's torch), its own
# package python3-dtrain-torch_VERSION_ARCH.deb beside dtrain's (cmake/packaging.cmake).
#   build-deb.sh SOURCE_DIR BUILD_DIR OUT_DIR   ->  OUT_DIR/dtrain_VERSION_ARCH.deb [...]
set -euo pipefail
src=$(cd "$1" && pwd) build=$2 out=$3
source "$src/scripts/lib/compiler-cache.sh"
compiler_cache_args "$build"
read -r -a extra <<<"${CMAKE_ARGS:-}"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DDTRAIN_WITH_NCCL=ON -DDTRAIN_BUILD_TESTS=OFF -DDTRAIN_BUILD_BENCH=OFF \
  "${COMPILER_CACHE_ARGS[@]}" "${extra[@]}"
cmake --build "$build" -j"$(nproc)"
mkdir -p "$out"
rm -f "$out"/dtrain_*.deb "$out"/python3-dtrain-torch_*.deb
(cd "$build" && cpack -G DEB -B "$(cd "$out" && pwd)")

# CPack 3.25 adds postinst/postrm scripts that run ldconfig for libraries under /usr/lib; Debian
# runs it through the ldconfig trigger (DEBIAN/triggers, from cmake/packaging.cmake) instead, so
# each package is rebuilt without them (lintian: maintscript-calls-ldconfig). dtrain's holds
# libdtrain.so.0 and the trigger; the torch backend's holds no shared library of the libdir.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for deb in "$out"/dtrain_*.deb "$out"/python3-dtrain-torch_*.deb; do
  [[ -f $deb ]] || continue
  rm -rf "$root/pkg"
  dpkg-deb -R "$deb" "$root/pkg"
  if [[ $(basename "$deb") == dtrain_* ]]; then
    grep -qx 'activate-noawait ldconfig' "$root/pkg/DEBIAN/triggers"
  fi
  for script in postinst postrm; do
    if [[ -f $root/pkg/DEBIAN/$script ]]; then
      if grep -vE '^(#!/bin/sh|set -e|if \[ "\$1" = "(configure|remove)" \]; then|\s*ldconfig|fi|)$' \
        "$root/pkg/DEBIAN/$script"; then
        echo "build-deb.sh: $(basename "$deb"): DEBIAN/$script does more than run ldconfig; not removing it" >&2
        exit 1
      fi
      rm "$root/pkg/DEBIAN/$script"
    fi
  done
  dpkg-deb --root-owner-group -b "$root/pkg" "$deb" >/dev/null
  echo "build-deb.sh: $deb"
done
