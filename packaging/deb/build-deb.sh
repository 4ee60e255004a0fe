#!/usr/bin/env bash
# Builds dtrain's Debian package as it is shipped, in a build tree of its own: prefix /usr (so
# libraries go to the multiarch libdir, /usr/lib/x86_64-linux-gnu), Release flags with debug
# information that CPack strips, and without the NCCL backend: a .deb must run on nodes without
# /usr/local/cuda, whose libnccl/libcudart no Debian package provides.
#   build-deb.sh SOURCE_DIR BUILD_DIR OUT_DIR   ->  OUT_DIR/dtrain_VERSION_ARCH.deb
set -euo pipefail
src=$(cd "$1" && pwd) build=$2 out=$3
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DDTRAIN_WITH_NCCL=OFF -DDTRAIN_BUILD_TESTS=OFF -DDTRAIN_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build "$build" -j"$(nproc)"
mkdir -p "$out"
rm -f "$out"/dtrain_*.deb
(cd "$build" && cpack -G DEB -B "$(cd "$out" && pwd)")
