#!/usr/bin/env bash
# The Debian package as CI ships it (packaging/deb/build-deb.sh, its own build tree under
# BUILD_DIR/deb): lintian reports no error (its warnings are printed), the contents sit under the
# multiarch libdir, Depends come from dpkg-shlibdeps and name no CUDA library, the NCCL backend is
# compiled in (when this machine has the CUDA and NCCL headers) and loads NCCL at run time (`dtrain
# doctor`), and, where this test
# may change the system (root, dtrain not installed already), it installs with apt-get, works from
# /usr, and is removed again; otherwise the unpacked package is checked. Where TORCH is 1 (the
# test tree found torch, so the package's tree does too) the torch backend is its own package,
# python3-dtrain-torch: lintian-clean, depending on this dtrain and python3-torch, holding
# dtrain.torch alone, while dtrain's package has no dtrain.torch and no libtorch in its Depends;
# installed with it, `import dtrain.torch` runs a collective from /usr.
#   deb_test.sh SOURCE_DIR BUILD_DIR TORCH
set -euo pipefail
src=$1 build=$2 torch=${3:-0}
source "$src/tests/integration/cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-deb-test.XXXXXX")
deb_installed_here=0
cleanup() {
  if ((deb_installed_here)); then
    apt-get purge -y -qq python3-dtrain-torch dtrain >/dev/null 2>&1 || true
  fi
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

torch_deb=$(ls "$work"/deb/python3-dtrain-torch_*.deb 2>/dev/null || true)
if ((torch)); then
  [[ -n $torch_deb ]] || fail "no python3-dtrain-torch package beside $(basename "$deb"): $(ls "$work/deb")"
else
  [[ -z $torch_deb ]] || fail "a torch backend package without torch in this tree: $torch_deb"
fi

command -v lintian >/dev/null || fail "lintian is not installed (scripts/install-deps installs it)"
for package in "$deb" $torch_deb; do
  echo "== lintian $(basename "$package")"
  # lintian's exit status also counts warnings; the errors are the lines tagged E:.
  lintian --tag-display-limit 0 "$package" >"$work/lintian.log" 2>&1 || true
  grep -v '^E: ' "$work/lintian.log" || true
  errors=$(grep '^E: ' "$work/lintian.log" || true)
  [[ -z $errors ]] || fail "lintian on $(basename "$package") reports $(wc -l <<<"$errors") error(s):"$'\n'"$errors"
done

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
# The torch backend is python3-dtrain-torch's: dtrain's package neither holds nor needs it.
if grep -E '/dtrain/(_torch|torch\.py)' <<<"$contents"; then
  fail "$(basename "$deb") holds the torch backend (above), which is python3-dtrain-torch's"
fi
[[ "$depends" != *torch* ]] || fail "Depends of $(basename "$deb") names torch: $depends"
if [[ -n $torch_deb ]]; then
  echo "== $(basename "$torch_deb"): dtrain.torch alone, on this dtrain and python3-torch"
  torch_depends=$(dpkg-deb -f "$torch_deb" Depends)
  for d in "dtrain (= $version)" "python3-torch (>= " libtorch; do
    expect_contains "$torch_depends" "$d" "Depends of $(basename "$torch_deb")"
  done
  torch_contents=$(dpkg-deb -c "$torch_deb" | awk '{print $6}' | grep -v '/$')
  unexpected=$(grep -vE '^\./usr/lib/python3/dist-packages/dtrain/(_torch\..*\.so|torch\.pyi?)$|^\./usr/share/doc/python3-dtrain-torch/(copyright|changelog\.gz)$' <<<"$torch_contents" || true)
  [[ -z $unexpected ]] || fail "$(basename "$torch_deb") holds more than dtrain.torch: $unexpected"
  grep -q '/dtrain/_torch\.' <<<"$torch_contents" || fail "$(basename "$torch_deb") lacks the module: $torch_contents"
fi
dpkg-deb -x "$deb" "$work/unpacked"
for f in "$work/unpacked/usr/bin/dtrain" "$work/unpacked/usr/lib/$multiarch/libdtrain.so.0"; do
  needed=$(readelf -d "$f")
  if grep -qE 'libnccl|libcudart|libcuda\.' <<<"$needed"; then
    fail "$f needs a CUDA library that no Debian package provides: $(grep NEEDED <<<"$needed")"
  fi
done

if [[ $(id -u) -eq 0 ]] && ! dpkg-query -W -f='${Status}' dtrain 2>/dev/null | grep -q 'ok installed'; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" $torch_deb >"$work/apt.log" 2>&1 ||
    fail "apt-get install $deb $torch_deb failed: $(tail -20 "$work/apt.log")"
  deb_installed_here=1
  dtrain_bin=/usr/bin/dtrain dtrain_libdir=
  expect_eq "dtrain $version" "$(/usr/bin/dtrain --version)" "/usr/bin/dtrain --version"
  if [[ -n $torch_deb ]]; then
    (cd "$work" && env -u PYTHONPATH -u DTRAIN_BOOTSTRAP -u PMIX_NAMESPACE -u PMIX_RANK \
      /usr/bin/python3 -c '
import torch, torch.distributed as dist, dtrain.torch
assert dtrain.torch.__file__.startswith("/usr/lib/python3/dist-packages/"), dtrain.torch.__file__
dtrain.torch.init_process_group()  # one process: the single-process bootstrap
assert dist.get_backend() == "dtrain", dist.get_backend()
x = torch.ones(3)
dist.all_reduce(x)
assert x.tolist() == [1.0, 1.0, 1.0], x
print("ok: dtrain.torch from", dtrain.torch.__file__)
') || fail "import dtrain.torch from the installed packages failed"
  fi
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
