#!/usr/bin/env bash
# dtrain as users and admins meet it: `cmake --install` to a prefix, then from that prefix the
# program, its man pages and bash completion, external C and C++ builds through find_package and
# pkg-config, the modulefile and the plugstack snippet; the Spack recipe parses; the Debian package
# has the right contents and Depends and, where this test may change the system (root, dtrain not
# installed already), installs with apt-get, works from /usr, and is removed again.
#   install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
source "$src/tests/integration/cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-install-test.XXXXXX")
deb_installed_here=0
cleanup() {
  if ((deb_installed_here)); then apt-get purge -y -qq dtrain >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
version=$(sed -n 's/^project(dtrain VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

consumers() {  # PREFIX LABEL: build and run the external programs against an installed tree
  local prefix=$1 label=$2 out
  rm -rf "$work/cb"
  cmake -S "$src/tests/integration/install/consumer" -B "$work/cb" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/cb.log" 2>&1 || fail "$label: find_package(dtrain) configure failed: $(cat "$work/cb.log")"
  cmake --build "$work/cb" >>"$work/cb.log" 2>&1 || fail "$label: consumer build failed: $(cat "$work/cb.log")"
  out=$("$work/cb/consumer_cxx") || fail "$label: consumer_cxx failed: $out"
  expect_eq "consumer_cxx ok: rank 0 of 1 (single)" "$out" "$label: C++ consumer via find_package"
  out=$("$work/cb/consumer_c") || fail "$label: consumer_c failed: $out"
  expect_eq "consumer_c ok: 1 rank(s)" "$out" "$label: C consumer via find_package"
  local pc_dir
  pc_dir=$(dirname "$(find "$prefix" -name dtrain.pc | head -1)")
  [[ -f $pc_dir/dtrain.pc ]] || fail "$label: no dtrain.pc under $prefix"
  local flags
  flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs dtrain)
  local libdir
  libdir=$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir dtrain)
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Werror "$src/tests/integration/install/consumer/consumer.c" $flags \
    -Wl,-rpath,"$libdir" -o "$work/pc_c" || fail "$label: cc with pkg-config flags [$flags] failed"
  out=$("$work/pc_c") || fail "$label: pkg-config C consumer failed: $out"
  expect_eq "consumer_c ok: 1 rank(s)" "$out" "$label: C consumer via pkg-config"
  # shellcheck disable=SC2086
  c++ -std=c++20 -Wall -Werror "$src/tests/integration/install/consumer/consumer.cpp" $flags \
    -Wl,-rpath,"$libdir" -o "$work/pc_cxx" || fail "$label: c++ with pkg-config flags failed"
  out=$("$work/pc_cxx") || fail "$label: pkg-config C++ consumer failed: $out"
  expect_contains "$out" "consumer_cxx ok" "$label: C++ consumer via pkg-config"
}

echo "== cmake --install into a prefix"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  fail "cmake --install failed: $(tail -20 "$work/install.log")"
expect_eq "dtrain $version" "$("$prefix/bin/dtrain" --version)" "installed dtrain --version"
for f in include/dtrain/dtrain.hpp include/dtrain/dtrain.h lib/cmake/dtrain/dtrainConfig.cmake \
  share/dtrain/templates/slurm.sh.tmpl share/dtrain/templates/sites/polaris.yaml; do
  [[ -f $prefix/$f ]] || fail "expected $prefix/$f"
done
# Installed elsewhere than it was built, the CLI still finds the profiles' topology files.
out=$(cd "$work" && "$prefix/bin/dtrain" plan "$src/tests/fixtures/golden/polaris/job.yaml")
expect_contains "$out" "# on every node ($prefix/share/dtrain/templates/topologies/" "plan from the install"

echo "== man pages and bash completion"
page=$(MANPATH=$prefix/share/man man -w dtrain-submit) || fail "man -w dtrain-submit found nothing"
expect_eq "$prefix/share/man/man1/dtrain-submit.1" "$page" "man page path"
text=$(MANPATH=$prefix/share/man MANPAGER=cat MANWIDTH=200 man dtrain-submit 2>/dev/null)
expect_contains "$text" "--wait" "man dtrain-submit"
expect_contains "$text" "dtrain-submit - Plan a job from its spec" "man dtrain-submit NAME"
completion=$(
  PATH=$prefix/bin:$PATH
  source "$prefix/share/bash-completion/completions/dtrain"
  COMP_WORDS=(dtrain su)
  COMP_CWORD=1
  _dtrain
  echo "${COMPREPLY[*]}"
  COMP_WORDS=(dtrain submit --wa)
  COMP_CWORD=2
  _dtrain
  echo "${COMPREPLY[*]}"
)
expect_eq $'submit\n--wait' "$completion" "bash completion of 'dtrain su' and 'dtrain submit --wa'"

echo "== external builds: find_package(dtrain) and pkg-config"
consumers "$prefix" "prefix"

echo "== modulefile (Tcl, as Environment Modules and Lmod read it) and plugstack snippet"
modulefile=$prefix/share/modulefiles/dtrain/$version
[[ -f $modulefile ]] || fail "expected $modulefile"
paths=$(tclsh <<TCL
set ModulesCurrentModulefile {$modulefile}
proc module-whatis {args} {}
proc conflict {args} {}
proc prepend-path {var value} { puts "\$var=\$value" }
source {$modulefile}
TCL
)
expect_contains "$paths" "PATH=$prefix/bin" "modulefile PATH"
expect_contains "$paths" "PKG_CONFIG_PATH=$prefix/lib" "modulefile PKG_CONFIG_PATH"
expect_contains "$paths" "CMAKE_PREFIX_PATH=$prefix" "modulefile CMAKE_PREFIX_PATH"
expect_contains "$paths" "MANPATH=$prefix/share/man" "modulefile MANPATH"
if [[ -f $prefix/share/dtrain/plugstack.conf.d/dtrain.conf ]]; then
  line=$(grep -v '^#' "$prefix/share/dtrain/plugstack.conf.d/dtrain.conf")
  so=${line#optional }
  [[ -f $so ]] || fail "plugstack snippet names $so, which is not installed"
fi

echo "== Spack recipe parses"
python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$src/packaging/spack/package.py" || fail "packaging/spack/package.py does not parse"

echo "== Debian package"
(cd "$build" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) ||
  fail "cpack failed: $(tail -20 "$work/cpack.log")"
deb=$(ls "$work"/deb/dtrain_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
for d in libpmix2 libhwloc15 libyaml-cpp0.7 openmpi-bin; do
  expect_contains "$depends" "$d" "Depends of $(basename "$deb")"
done
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/dtrain ./usr/lib/libdtrain.so.0 ./usr/include/dtrain/dtrain.hpp \
  ./usr/lib/cmake/dtrain/dtrainConfig.cmake ./usr/lib/pkgconfig/dtrain.pc \
  ./usr/share/man/man1/dtrain-submit.1 ./usr/share/bash-completion/completions/dtrain \
  ./usr/share/modulefiles/dtrain/$version; do
  grep -qxF "$f" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
if [[ $(id -u) -eq 0 ]] && ! dpkg-query -W -f='${Status}' dtrain 2>/dev/null | grep -q 'ok installed'; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/apt.log" 2>&1 ||
    fail "apt-get install $deb failed: $(tail -20 "$work/apt.log")"
  deb_installed_here=1
  expect_eq "dtrain $version" "$(/usr/bin/dtrain --version)" "/usr/bin/dtrain --version"
  consumers /usr "deb"
else
  echo "(not root, or a dtrain package is installed already: checking the unpacked package instead of installing it)"
  dpkg-deb -x "$deb" "$work/unpacked"
  expect_eq "dtrain $version" "$(LD_LIBRARY_PATH=$work/unpacked/usr/lib "$work/unpacked/usr/bin/dtrain" --version)" \
    "unpacked dtrain --version"
  consumers "$work/unpacked/usr" "unpacked deb"
fi
echo PASS
