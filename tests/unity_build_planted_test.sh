#!/usr/bin/env bash
# tests/check_unity_build.sh fails on a clash planted in a copy of the sources: every file of
# runtime/common (one unity batch in the demo's build) defines the same private constant, as two
# files of a library that each keep a helper of the same name in their anonymous namespace do. Each
# file still compiles alone (the test build); the check must exit 1 naming the batch, the clashing
# name and the files that define it.
#   unity_build_planted_test.sh SOURCE_DIR [CMAKE_ARGS...]
set -euo pipefail
root=$(cd "$1" && pwd)
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-unity-planted.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -C "$root" --exclude='./build*' --exclude=./runs --exclude=./.git -cf - . | tar -C "$work" -xf -
planted=()
for file in "$work"/runtime/common/*.cpp; do
  printf '%s\n' 'namespace {' '[[maybe_unused]] constexpr int kUnityPlantedClash = 1;' '}' >>"$file"
  planted+=("${file#"$work"/}")
done
if ((${#planted[@]} < 2)); then
  echo "FAIL: runtime/common has ${#planted[@]} source file(s); the clash needs two in one batch" >&2
  exit 1
fi
status=0
out=$(bash "$root/tests/check_unity_build.sh" "$work" --only runtime/common/ "$@" 2>&1) || status=$?
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
((status == 1)) || fail "check_unity_build.sh exited $status on the planted clash, expected 1"
expect() { grep -qF -- "$1" <<<"$out" || fail "the check's output does not name $2 ('$1')"; }
expect "FAIL: the unity batch runtime/common/CMakeFiles/dtrain_common.dir/Unity/unity_0_cxx.cxx" "the batch"
expect "kUnityPlantedClash" "the clashing name"
named=0
for file in "${planted[@]}"; do
  grep -qF "$work/$file:" <<<"$out" && named=$((named + 1))
done
((named >= 2)) || fail "the compiler's errors name $named of the planted files, expected at least 2"
expect "scripts/demo would build file by file" "the consequence"
if ((failures > 0)); then
  printf '%s\n' "--- check_unity_build.sh's output:" "$out" >&2
  exit 1
fi
echo "unity_build_planted: the planted clash fails the check, named ($named files)"
echo "$out"
