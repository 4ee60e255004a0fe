#!/usr/bin/env bash
# dtrain as users and admins meet it: `cmake --install` to a prefix, then from that prefix the
# program, its man pages and bash completion, external C and C++ builds through find_package and
# pkg-config, the modulefile (evaluated, and loaded with Environment Modules and Lmod where they are
# installed) and the plugstack snippet; `--component runtime` alone; no source path in the program;
# the Spack recipe parses. The Debian package is deb_test.sh.
#   install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
source "$src/tests/integration/cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
version=$(sed -n 's/^project(dtrain VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

source "$src/tests/integration/install/consumers.sh"

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
# ... and so does the build tree's, beside its own copy (the program holds no source path).
out=$(cd "$work" && "$build/bin/dtrain" plan "$src/tests/fixtures/golden/polaris/job.yaml")
expect_contains "$out" "# on every node ($build/share/dtrain/templates/topologies/" "plan from the build tree"
strip -o "$work/dtrain.stripped" "$prefix/bin/dtrain"
if grep -qF "$src/" "$work/dtrain.stripped"; then
  fail "installed bin/dtrain embeds the source path $src: $(strings "$work/dtrain.stripped" | grep -F "$src/" | head -3)"
fi

echo "== cmake --install --component runtime: what a node that only runs jobs needs"
cmake --install "$build" --prefix "$work/rt" --component runtime >"$work/rt.log" 2>&1 ||
  fail "cmake --install --component runtime failed: $(tail -20 "$work/rt.log")"
for f in bin/dtrain share/dtrain/templates/slurm.sh.tmpl share/dtrain/templates/sites/polaris.yaml \
  share/dtrain/templates/topologies/polaris-like-4xa100.xml share/man/man1/dtrain.1.gz; do
  [[ -f $work/rt/$f ]] || fail "--component runtime did not install $f"
done
[[ -n $(find "$work/rt" -name libdtrain.so.0) ]] || fail "--component runtime did not install libdtrain.so.0"
if [[ -n $(find "$build" -name dtrain_spank.so -not -path "$work/*" | head -1) ]]; then
  [[ -n $(find "$work/rt" -name dtrain_spank.so) ]] || fail "--component runtime did not install dtrain_spank.so"
fi
expect_eq "dtrain $version" "$("$work/rt/bin/dtrain" --version)" "--component runtime: dtrain --version"
out=$(cd "$work" && "$work/rt/bin/dtrain" plan "$src/tests/fixtures/golden/polaris/job.yaml")
expect_contains "$out" "# on every node ($work/rt/share/dtrain/templates/topologies/" "plan from --component runtime"

echo "== man pages and bash completion"
page=$(MANPATH=$prefix/share/man man -w dtrain-submit) || fail "man -w dtrain-submit found nothing"
expect_eq "$prefix/share/man/man1/dtrain-submit.1.gz" "$page" "man page path"
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
expect_eq $'submit supervise\n--wait' "$completion" "bash completion of 'dtrain su' and 'dtrain submit --wa'"

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
proc append-path {var value} { puts "\$var+=\$value" }
source {$modulefile}
TCL
)
expect_contains "$paths" "PATH=$prefix/bin" "modulefile PATH"
expect_contains "$paths" "PKG_CONFIG_PATH=$prefix/lib" "modulefile PKG_CONFIG_PATH"
expect_contains "$paths" "CMAKE_PREFIX_PATH=$prefix" "modulefile CMAKE_PREFIX_PATH"
expect_contains "$paths" "MANPATH=$prefix/share/man" "modulefile MANPATH"
# `module load dtrain` for real: dtrain's pages and the system's (an empty MANPATH element).
for init in /usr/share/modules/init/bash /usr/share/lmod/lmod/init/bash; do
  if [[ ! -f $init ]]; then
    echo "($init not found: $(basename "$(dirname "$(dirname "$init")")") not installed, not tested)"
    continue
  fi
  out=$(env -u MANPATH -u MODULEPATH -u LOADEDMODULES bash --noprofile --norc -c '
    source "$1" >/dev/null 2>&1
    module use "$2" && module load dtrain || exit 1
    echo "MANPATH=$MANPATH"
    command -v dtrain
    man -w dtrain-submit && man -w ls' _ "$init" "$prefix/share/modulefiles" 2>&1) ||
    fail "module load dtrain with $init, then man -w dtrain-submit and man -w ls: $out"
  expect_contains "$out" "$prefix/bin/dtrain" "$init: dtrain on PATH"
  expect_contains "$out" "$prefix/share/man/man1/dtrain-submit.1.gz" "$init: man -w dtrain-submit"
done
if [[ -f $prefix/share/dtrain/plugstack.conf.d/dtrain.conf ]]; then
  line=$(grep -v '^#' "$prefix/share/dtrain/plugstack.conf.d/dtrain.conf")
  so=${line#optional }
  [[ -f $so ]] || fail "plugstack snippet names $so, which is not installed"
fi

echo "== Spack recipe parses"
python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$src/packaging/spack/package.py" || fail "packaging/spack/package.py does not parse"

echo PASS
