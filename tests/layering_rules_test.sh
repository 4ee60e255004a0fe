#!/usr/bin/env bash
# Each rule of tests/check_layering.sh and each limit of tests/check_sizes.py fails on a planted
# violation: the checked folders are copied to a temporary tree (which must pass as it is), one
# violation of every rule is planted there at once, each in a file of its own, and the check must
# exit 1 with each rule's message naming its planted file. A rule whose check matches nothing (a
# typo in a regex, a folder renamed) fails here, not silently there.
set -euo pipefail
root=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for dir in cli runtime spank-plugin python bench examples; do
  (cd "$root" && find "$dir" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o \
    -name '*.c' -o -name '*.in' \) -print0) |
    (cd "$root" && xargs -0 cp --parents -t "$work")
done
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
layering() { bash "$root/tests/check_layering.sh" "$work" 2>&1; }
sizes() { python3 "$root/tests/check_sizes.py" "$work" 2>&1; }
out=$(layering) || fail "the unchanged copy breaks a layering rule: $out"
out=$(sizes) || fail "the unchanged copy breaks a size limit: $out"

planted=()  # "file|expected message"
# plant FILE LINE EXPECTED: LINE added to FILE (relative to the copy) breaks the rule whose message
# contains EXPECTED.
plant() {
  mkdir -p "$work/$(dirname "$1")"
  printf '%s\n' "$2" >>"$work/$1"
  planted+=("$1|$3")
}
# expect_all OUTPUT PREFIX: each planted file is named in a block of OUTPUT (a block: a line
# starting with PREFIX and the lines after it up to the next) whose first line has its message.
expect_all() {
  local output=$1 prefix=$2 entry file expected
  for entry in "${planted[@]}"; do
    file=${entry%%|*}
    expected=${entry#*|}
    if awk -v p="$prefix" -v e="$expected" -v f="$file" '
         index($0, p) == 1 { inblock = index($0, e) > 0 }
         inblock && index($0, f) > 0 { found = 1 }
         END { exit !found }' <<<"$output"; then
      echo "ok: $expected ($file)"
    else
      fail "$file: expected a '$expected' naming it; got: $output"
    fi
  done
}

plant runtime/planted_cli.cpp '#include "plan/job_spec.hpp"' "runtime/ must not include the CLI or planner"
plant runtime/common/planted.cpp '#include "records/log_line.hpp"' "runtime/common must include only the standard library"
plant runtime/launch/planted.cpp '#include "affinity/topology.hpp"' "runtime/launch may use only runtime/common"
plant runtime/affinity/planted.cpp '#include "nccl_api.hpp"' "runtime/affinity must stay free of MPI"
plant runtime/records/planted.cpp '#include "comm/engine.hpp"' "runtime/records depends on nlohmann-json only"
plant cli/report/planted.cpp '#include "run_dir.hpp"' "cli/report must stay pure"
plant cli/plan/planted_report.cpp '#include "report/stats.hpp"' "cli/plan must stay pure (and plan, not report)"
plant cli/plan/planted_records.cpp '#include "records/rank_files.hpp"' "cli/plan may include only records/run_dir_layout.hpp"
plant spank-plugin/planted_plan.cpp '#include "plan/planner.hpp"' "spank-plugin may use only runtime/launch"
plant spank-plugin/planted_rundir.cpp '#include "rundir/reader.hpp"' "spank-plugin must not use the CLI's run-directory readers"
plant python/src/planted_comm.cpp '#include "comm/engine.hpp"' "python/ may use only libdtrain's public headers"
plant cli/planted_hwloc.cpp '#include <hwloc.h>' "<hwloc.h> is included by 2 files"
plant cli/planted_spank.cpp '#include <slurm/spank.h>' "<slurm/spank.h> is included by 2 files"
plant bench/planted.cpp '#include <mpi.h>' "<mpi.h> is included by 2 files in bench"
plant runtime/bootstrap/planted.cpp '#include "comm/engine.hpp"' "runtime/bootstrap must not include the communicators"
plant runtime/comm/planted_mpi.cpp '#include <mpi.h>' "mpi.h belongs under runtime/mpi only"
plant cli/planted_slurm.cpp 'const char* nodes = "SLURM_JOB_NODELIST";' "SLURM_* belongs to the Slurm adapter"
plant cli/plan/planted_env.cpp 'const char* home = std::getenv("HOME");' "cli/plan and the affinity solver must stay pure"
plant runtime/affinity/rank_env.hpp 'auto now = std::chrono::steady_clock::now();' "cli/plan and the affinity solver must stay pure"
plant runtime/planted_config.cpp '#ifdef DTRAIN_HAVE_CUDA' "DTRAIN_HAVE_* are 0/1 macros"
plant python/src/planted_config.cpp '#if defined(DTRAIN_HAVE_NCCL)' "DTRAIN_HAVE_* are 0/1 macros"
plant runtime/comm/planted_env.cpp 'const char* fd = std::getenv("DTRAIN_ALARM_FD");' "runtime/ reads the environment only in settings.cpp"
plant cli/planted_wait.cpp 'if (WIFEXITED(status)) return WEXITSTATUS(status);' "wait statuses and exec belong to runtime/common/child_process.cpp"
plant spank-plugin/planted_exec.cpp '::execvp(argv[0], argv);' "wait statuses and exec belong to runtime/common/child_process.cpp"
rc=0
out=$(layering) || rc=$?
((rc == 1)) || fail "check_layering.sh with every rule broken: expected exit 1, got $rc"
expect_all "$out" "layering: "

# The size limits: a function of 101 lines and a file of 501; a function of 100 lines passes.
planted=()
{
  echo 'int long_one(int x) {'
  for ((i = 0; i < 99; i++)); do echo "  x += $i;"; done
  echo '}'
  echo 'int short_one(int x) {'
  for ((i = 0; i < 98; i++)); do echo "  x += $i;"; done
  echo '}'
} >"$work/cli/planted_long.cpp"
planted+=("cli/planted_long.cpp:1: long_one|is 101 lines; expected at most 100")
for ((i = 0; i < 501; i++)); do echo "// line $i"; done >"$work/runtime/planted_long.hpp"
planted+=("runtime/planted_long.hpp|501 lines; expected at most 500 per file")
rc=0
out=$(sizes) || rc=$?
((rc == 1)) || fail "check_sizes.py with both limits broken: expected exit 1, got $rc"
expect_all "$out" "sizes: "
[[ $out != *short_one* ]] || fail "a function of 100 lines was refused: $out"

((failures == 0)) || exit 1
echo "every layering rule and size limit fails on its planted violation"
