#!/usr/bin/env bash
# scripts/test's label selection (scripts/lib/ctest-labels.sh): the arguments it hands ctest, and
# what ctest then lists in this build tree: `-LE multinode` once brought the benchmarks back.
#   ctest_labels_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source "$1/scripts/lib/ctest-labels.sh"
build=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_args() {
  local want=$1
  shift
  ctest_arguments "$@" || fail "ctest_arguments $* returned $?"
  [[ ${CTEST_ARGS[*]} == "$want" ]] || fail "scripts/test $*: expected ctest args [$want], got [${CTEST_ARGS[*]}]"
}
expect_args "-LE bench"
expect_args "-LE bench|multinode -V" -LE multinode -V
expect_args "-LE bench|multinode" -LEmultinode
expect_args "-LE bench|fuzz" --label-exclude=fuzz
expect_args "-LE bench|multinode|install" --quick
expect_args "-L unit" -L unit
expect_args "-LE multinode -L bench" -L bench -LE multinode
expect_args "-LE bench -R Router -j2" -R Router -j2
err=$(ctest_arguments -LE 2>&1) && fail "a bare -LE was accepted"
[[ $err == "scripts/test: -LE needs a label regex" ]] || fail "bare -LE: $err"

# What ctest runs with them: the tests of each label, listed (-N).
listed() {
  ctest_arguments "$@"
  ctest --test-dir "$build" -N "${CTEST_ARGS[@]}" | sed -n 's/^ *Test *#[0-9]*: //p'
}
labelled() { ctest --test-dir "$build" -N -L "$1" | sed -n 's/^ *Test *#[0-9]*: //p'; }
bench=$(labelled bench | sed -n 1p)
multinode=$(labelled multinode | sed -n 1p)
install=$(labelled install | sed -n 1p)
unit=$(labelled unit | sed -n 1p)
[[ -n $bench && -n $unit && -n $install ]] || fail "this build has no bench, unit or install test to list"
contains() { grep -qxF "$2" <<<"$1"; }
default=$(listed)
contains "$default" "$unit" || fail "the default run left out $unit"
contains "$default" "$bench" && fail "the default run lists the benchmark $bench"
without_multinode=$(listed -LE multinode)
contains "$without_multinode" "$bench" && fail "-LE multinode brought the benchmark $bench back"
contains "$without_multinode" "$unit" || fail "-LE multinode left out $unit"
if [[ -n $multinode ]]; then
  contains "$without_multinode" "$multinode" && fail "-LE multinode lists $multinode"
fi
quick=$(listed --quick)
contains "$quick" "$install" && fail "--quick lists the install test $install"
contains "$quick" "$unit" || fail "--quick left out $unit"
contains "$(listed -L bench)" "$bench" || fail "-L bench does not list $bench"
echo PASS
