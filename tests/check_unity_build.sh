#!/usr/bin/env bash
# Every unity batch of scripts/demo's build compiles. The demo builds with CMAKE_UNITY_BUILD (each
# library's sources compiled eight at a time as one file, docs/install.md "Build time") and falls
# back to the build file by file, three times slower, when a batch does not compile; the test build
# compiles every file alone and would not notice two files of a library that define the same
# private name. This check configures the demo's tree (scripts/lib/demo-build.sh) in a temporary
# directory and runs the compiler on each batch with -fsyntax-only: the front end, which finds
# every clash, without code generation (a tenth of the build's CPU time).
#   check_unity_build.sh SOURCE_DIR [--only PATH_PART] [CMAKE_ARGS...]
#     --only   check only the batches whose build path contains PATH_PART (runtime/common/)
# Exit 1 naming each batch that does not compile, its files and the compiler's errors.
set -euo pipefail
root=$(cd "$1" && pwd)
shift
only=
if [[ ${1:-} == --only ]]; then
  only=$2
  shift 2
fi
# shellcheck source=scripts/lib/demo-build.sh
source "$root/scripts/lib/demo-build.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-unity-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --graphviz: the targets each demo target depends on (deps.dot.<target>), whose batches are those
# the demo compiles.
if ! cmake -S "$root" -B "$work" "${DEMO_CMAKE_OPTIONS[@]}" -DCMAKE_UNITY_BUILD=ON "$@" \
  --graphviz="$work/deps.dot" >"$work/configure.log" 2>&1; then
  cat "$work/configure.log" >&2
  echo "check_unity_build: FAIL: configuring the demo's unity tree failed (above)" >&2
  exit 1
fi
# The compile commands of the demo targets' batches (CMake writes the unity_N_cxx.cxx files when
# it configures), one "directory<TAB>command<TAB>batch" line each.
python3 - "$work" "$only" "${DEMO_TARGETS[@]}" >"$work/batches.tsv" <<'PY'
import json, re, sys
work, only, demo_targets = sys.argv[1], sys.argv[2], sys.argv[3:]
targets = set(demo_targets)
for target in demo_targets:
    with open(f"{work}/deps.dot.{target}") as graph:
        targets.update(re.findall(r'label = "([^"\\]+)', graph.read()))
for entry in json.load(open(f"{work}/compile_commands.json")):
    match = re.search(r"/CMakeFiles/([^/]+)\.dir/Unity/unity_", entry["file"])
    if match and match.group(1) in targets and only in entry["file"]:
        print(entry["directory"] + "\t" + entry["command"] + "\t" + entry["file"])
PY
count=$(wc -l <"$work/batches.tsv")
if ((count == 0)); then
  echo "check_unity_build: FAIL: the unity tree has no batch${only:+ under '$only'} (CMake's Unity/unity_N_cxx.cxx files moved?)" >&2
  exit 1
fi
failed=0
while IFS=$'\t' read -r dir command file; do
  if ! (cd "$dir" && eval "$command -fsyntax-only -O0") >"$work/errors.log" 2>&1; then
    failed=$((failed + 1))
    echo "check_unity_build: FAIL: the unity batch ${file#"$work"/} does not compile as one file." >&2
    echo "  Its files, compiled together:" >&2
    sed -n 's|^#include "'"$root"'/\(.*\)"$|    \1|p' "$file" >&2
    echo "  Two of them define the same private name, or one hides a name another uses; give" >&2
    echo "  one concept one definition in a header, different concepts different names" >&2
    echo "  (docs/install.md, \"Build time\"). The compiler's errors:" >&2
    grep -E 'error|note: .*(previous|declared)' "$work/errors.log" | head -20 | sed 's/^/    /' >&2
  fi
done <"$work/batches.tsv"
if ((failed > 0)); then
  echo "check_unity_build: $failed of $count unity batches do not compile: scripts/demo would build file by file" >&2
  exit 1
fi
echo "check_unity_build: all $count unity batches of the demo's build compile"
