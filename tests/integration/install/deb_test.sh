#!/usr/bin/env bash
# The Debian package as CI ships it (packaging/deb/build-deb.sh, its own build tree under
# BUILD_DIR/deb): lintian reports no error (its warnings are printed), the contents sit under the
# multiarch libdir, Depends come from dpkg-shlibdeps and name no CUDA library, the NCCL backend is
# compiled in (when this machine has the CUDA and NCCL headers) and loads NCCL at run time (`dtrain
# doctor`), and, where this test
# may change the system (root, dtrain not installed already), it installs with apt-get, works from
# /usr, and is removed again; otherwise the unpacked package is checked.
#   deb_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
source "$src/tests/integration/cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-deb-test.XXXXXX")
deb_installed_here=0
cleanup() {
  if ((deb_installed_here)); then apt-get purge -y -qq dtrain >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
version=$(sed -n 's/^project(dtrain VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
source "$src/tests/integration/install/consumers.sh"

echo "== build the package (packaging/deb/build-deb.sh)"
bash "$src/packaging/deb/build-deb.sh" "$src" "$build/deb" "$work/deb" >"$work/build.log" 2>&1 ||
  fail "build-deb.sh failed: $(tail -30 "$work/build.log")"
deb=$(ls "$work"/deb/dtrain_*.deb)

echo "== lintian $(basename "$deb")"
command -v lintian >/dev/null || fail "lintian is not installed (scripts/install-deps installs it)"
# lintian's exit status also counts warnings; the errors are the lines tagged E:.
lintian --tag-display-limit 0 "$deb" >"$work/lintian.log" 2>&1 || true
grep -v '^E: ' "$work/lintian.log" || true
errors=$(grep '^E: ' "$work/lintian.log" || true)
[[ -z $errors ]] || fail "lintian reports $(wc -l <<<"$errors") error(s):"$'\n'"$errors"

echo "== control: ldconfig by trigger, no maintainer scripts; contents and Depends"
control=$(dpkg-deb -I "$deb")
expect_contains "$control" "triggers" "control part of $(basename "$deb")"
if grep -qE ' (postinst|postrm|preinst|prerm) ' <<<"$control"; then
  fail "$(basename "$deb") has maintainer scripts (ldconfig belongs in the trigger): $control"
fi
expect_eq "activate-noawait ldconfig" "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./triggers)" "DEBIAN/triggers"
depends=$(dpkg-deb -f "$deb" Depends)
for d in libpmix2 libhwloc15 libyaml-cpp0.7 openmpi-bin; do
  expect_contains "$depends" "$d" "Depends of $(basename "$deb")"
done
# The Python module imports without NumPy (tests/unit/python/module_test.py): recommended only.
expect_contains "$(dpkg-deb -f "$deb" Recommends)" "python3-numpy" "Recommends of $(basename "$deb")"
[[ "$depends" != *numpy* ]] || fail "Depends of $(basename "$deb") names numpy, which the module does not need: $depends"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
lib=./usr/lib/$multiarch
for f in ./usr/bin/dtrain "$lib/libdtrain.so.0" ./usr/include/dtrain/dtrain.hpp \
  ./usr/include/dtrain/interrupt.hpp "$lib/cmake/dtrain/dtrainConfig.cmake" "$lib/pkgconfig/dtrain.pc" \
  ./usr/share/man/man1/dtrain-submit.1.gz ./usr/share/bash-completion/completions/dtrain \
  ./usr/share/modulefiles/dtrain/$version ./usr/share/doc/dtrain/copyright \
  ./usr/share/doc/dtrain/changelog.gz ./usr/share/dtrain/templates/slurm.sh.tmpl; do
  grep -qxF "$f" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
dpkg-deb -x "$deb" "$work/unpacked"
for f in "$work/unpacked/usr/bin/dtrain" "$work/unpacked/usr/lib/$multiarch/libdtrain.so.0"; do
  needed=$(readelf -d "$f")
  if grep -qE 'libnccl|libcudart|libcuda\.' <<<"$needed"; then
    fail "$f needs a CUDA library that no Debian package provides: $(grep NEEDED <<<"$needed")"
  fi
done

if [[ $(id -u) -eq 0 ]] && ! dpkg-query -W -f='${Status}' dtrain 2>/dev/null | grep -q 'ok installed'; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/apt.log" 2>&1 ||
    fail "apt-get install $deb failed: $(tail -20 "$work/apt.log")"
  deb_installed_here=1
  dtrain_bin=/usr/bin/dtrain dtrain_libdir=
  expect_eq "dtrain $version" "$(/usr/bin/dtrain --version)" "/usr/bin/dtrain --version"
  consumers /usr "deb"
else
  echo "(not root, or a dtrain package is installed already: checking the unpacked package instead of installing it)"
  dtrain_bin=$work/unpacked/usr/bin/dtrain dtrain_libdir=$work/unpacked/usr/lib/$multiarch
  expect_eq "dtrain $version" "$(LD_LIBRARY_PATH=$dtrain_libdir "$dtrain_bin" --version)" \
    "unpacked dtrain --version"
  consumers "$work/unpacked/usr" "unpacked deb"
fi
# The NCCL that libdtrain loads with dlopen (none of its NEEDED entries, checked above).
if [[ -f /usr/local/cuda/include/nccl.h ]]; then
  nccl=$(env -u DTRAIN_BOOTSTRAP -u PMIX_NAMESPACE -u PMIX_RANK \
    LD_LIBRARY_PATH="${dtrain_libdir:+$dtrain_libdir:}/usr/local/cuda/lib64" "$dtrain_bin" doctor 2>&1 |
    sed -n 's/^nccl  *//p' || true)
  [[ $nccl == 2.* ]] || fail "the package's dtrain doctor says nccl: '$nccl'; expected the NCCL backend compiled in and libnccl.so.2 loaded from /usr/local/cuda/lib64"
  echo "ok: packaged dtrain doctor: nccl $nccl"
fi
echo PASS
