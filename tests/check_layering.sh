#!/usr/bin/env bash
# The dependency rules of docs/architecture.md, checked on #include lines:
#   runtime/ (libdtrain and affinity) never includes the CLI or the planner;
#   runtime/common/ (the error root, the word joiner, the switch words, input-file reading and the
#   run settings' words (run_settings.hpp: records, hang_after, on_hang, which the planner and the
#   ranks both read) every library shares) includes only the standard library (and POSIX);
#   runtime/launch/ (the launcher contract) includes only runtime/common of dtrain, and no
#   hwloc, MPI, PMIx, CUDA or NCCL header: it knows no topology;
#   runtime/affinity/ includes no MPI, PMIx, CUDA or NCCL header;
#   runtime/records/ (the run-directory contract, linked by libdtrain, the CLI and the plugin)
#   includes nothing of the CLI, the plugin, libdtrain's internals, CLI11, hwloc, MPI or PMIx
#   (runtime/common's error root is all it shares);
#   cli/plan/ and cli/report/ (pure) include nothing of the CLI around them, and cli/plan/ nothing
#   of cli/report/; of libdtrain, cli/plan/ includes only dtrain/preemption.hpp, for the requeue
#   exit code, and of runtime/records only run_dir_layout.hpp, for the run directory's file names
#   (constants: nothing to link);
#   spank-plugin/ uses only runtime/launch, runtime/affinity, runtime/records and runtime/common
#   of dtrain;
#   python/ binds libdtrain's public API (dtrain/*.hpp) and nothing inside it;
#   no SLURM_* variable is named in cli/ outside the Slurm adapter (cli/plan/schedulers/slurm.cpp:
#   its directives, its restarts' node list and variables); the job-script templates are in
#   templates/, outside cli/;
#   cli/plan and the affinity solver (affinity, rank_env, binding, cpuset, policy) are pure: no
#   environment, clock, files or programs (architecture rule 2);
#   DTRAIN_HAVE_* build options are tested with #if, never #ifdef or defined() (rule 5);
#   runtime/ calls getenv only in settings.cpp and runtime/launch (rule 6);
#   WIFEXITED/WIFSIGNALED/WEXITSTATUS/WTERMSIG and the exec calls appear only in
#   runtime/common/child_process.cpp.
# tests/layering_rules_test.sh plants one violation of each rule in a copy and expects a failure.
# Each third-party C header has one including file.
set -euo pipefail
cd "$1"
status=0
violation() {
  echo "layering: $1" >&2
  status=1
}
check() {  # dir regex why
  local hits
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$1" \
    --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.c' || true)
  [[ -z "$hits" ]] || violation "$3:"$'\n'"$hits"
}
check runtime 'plan/|commands\.hpp|run_dir\.hpp|embedded_templates' "runtime/ must not include the CLI or planner"
check runtime/common 'affinity/|launch/|plan/|report/|records/|dtrain/|CLI/|nlohmann|yaml|hwloc|mpi\.h|pmix' "runtime/common must include only the standard library"
check runtime/launch 'affinity/|records/|comm/|bootstrap/|plan/|report/|dtrain/|CLI/|yaml|hwloc|mpi\.h|pmix|cuda|nccl' "runtime/launch may use only runtime/common of dtrain, and knows no topology"
check runtime/affinity 'mpi\.h|pmix|cuda|nccl' "runtime/affinity must stay free of MPI, PMIx, CUDA and NCCL"
check runtime/records 'launch/|plan/|report/|commands\.hpp|run_dir|process\.hpp|exit_codes|site_resolver|batch_job|mpijob_submit|embedded_templates|task_output|task_plan|spank|plugin_state|remote\.hpp|slurm/|CLI/|hwloc|mpi\.h|pmix|affinity/|dtrain/|comm/|bootstrap/|context_state|meter_file' "runtime/records depends on nlohmann-json only"
check cli/report 'plan/|commands\.hpp|run_dir\.hpp|process\.hpp|exit_codes\.hpp|CLI/|hwloc|mpi\.h|pmix' "cli/report must stay pure"
check cli/plan 'dtrain/(dtrain|checkpoint|shard)|commands\.hpp|run_dir\.hpp|process\.hpp|report/|CLI/|hwloc|mpi\.h|pmix' "cli/plan must stay pure (and plan, not report)"
plan_records=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]records/' cli/plan \
  --include='*.cpp' --include='*.hpp' | grep -vE '[<"]records/run_dir_layout\.hpp[>"]' || true)
[[ -z "$plan_records" ]] ||
  violation "cli/plan may include only records/run_dir_layout.hpp of runtime/records:"$'\n'"$plan_records"
check spank-plugin 'plan/|dtrain/dtrain|commands\.hpp' "spank-plugin may use only runtime/launch, runtime/affinity, runtime/records and runtime/common"
check python 'runtime/|comm/|bootstrap/|checkpoint/|preemption/|data/|net/|records/|context_state|meter_file|plan/|report/|rundir/|mpi\.h|pmix|hwloc' "python/ may use only libdtrain's public headers"
for header in hwloc.h mpi.h pmix.h nccl.h; do
  files=$(grep -rlE "^#include <$header>" cli runtime spank-plugin --include="*.cpp" --include="*.hpp" || true)
  n=$(grep -c . <<<"$files" || true)
  ((n <= 1)) || violation "<$header> is included by $n files; expected one wrapper:"$'\n'"$files"
done
# <slurm/spank.h> has one includer too (spank-plugin/spank_api.cpp). bench/ is a program of its
# own (it measures raw MPI beside dtrain), so it may have its own wrapper, but only one.
one_includer() {  # header dirs...
  local header=$1 n files
  shift
  files=$(grep -rlE "^[[:space:]]*#[[:space:]]*include[[:space:]]*<$header>" "$@" --include="*.cpp" \
    --include="*.hpp" --include="*.h" --include="*.c" || true)
  n=$(grep -c . <<<"$files" || true)
  ((n <= 1)) || violation "<$header> is included by $n files in $*; expected one wrapper:"$'\n'"$files"
}
one_includer slurm/spank.h cli runtime spank-plugin
for header in hwloc.h mpi.h pmix.h nccl.h slurm/spank.h; do
  one_includer "$header" bench
done
# The plugin writes rank logs itself; it never reads a run directory through the CLI's readers.
check spank-plugin 'rundir/|report/' "spank-plugin must not use the CLI's run-directory readers"
# runtime/bootstrap/ (who is where, the stores) does not include the communicators (comm/), and
# mpi.h is included under runtime/mpi/ only (gloo/mpi/): the MPI transport
# (runtime/comm/transport/mpi/) reaches it through mpi/mpi_api.hpp.
check runtime/bootstrap 'comm/' "runtime/bootstrap must not include the communicators (comm/)"
mpi_hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<mpi\.h>' runtime \
  --include='*.cpp' --include='*.hpp' --include='*.h' | grep -v '^runtime/mpi/' || true)
[[ -z "$mpi_hits" ]] || violation "mpi.h belongs under runtime/mpi only:"$'\n'"$mpi_hits"
# Slurm's knowledge stays in its adapter: supervise and the rest of the CLI ask the scheduler.
slurm_hits=$(grep -rn 'SLURM_' cli --include='*.cpp' --include='*.hpp' --include='*.in' |
  grep -v '^cli/plan/schedulers/slurm[^/]*:' || true)
[[ -z "$slurm_hits" ]] ||
  violation "SLURM_* belongs to the Slurm adapter (cli/plan/schedulers/slurm.cpp):"$'\n'"$slurm_hits"
# Rule 2: the planner and the affinity solver are pure: no environment, clock, files or programs.
pure_hits=$(grep -rnE '\bgetenv\s*\(|\bsetenv\s*\(|\benviron\b|_clock::now|\b[io]?fstream\b|\bfopen\s*\(|std::filesystem::|\bpopen\s*\(|\bsystem\s*\(' \
  cli/plan runtime/affinity/{affinity,rank_env,binding,cpuset,policy}.{cpp,hpp} \
  --include='*.cpp' --include='*.hpp' 2>/dev/null || true)
[[ -z "$pure_hits" ]] ||
  violation "cli/plan and the affinity solver must stay pure (no environment, clock, files or programs):"$'\n'"$pure_hits"
# Rule 5: build options are 0/1 macros of <dtrain/config.hpp>, tested with #if, never #ifdef.
config_hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*(ifn?def[[:space:]]+DTRAIN_HAVE_|(el)?if.*defined[[:space:]]*\(?[[:space:]]*DTRAIN_HAVE_)' \
  cli runtime spank-plugin python bench examples --include='*.cpp' --include='*.hpp' \
  --include='*.h' --include='*.in' || true)
[[ -z "$config_hits" ]] ||
  violation "DTRAIN_HAVE_* are 0/1 macros: test them with #if, not #ifdef/defined():"$'\n'"$config_hits"
# Rule 6: libdtrain reads the environment in runtime/settings.cpp (DTRAIN_*) and through
# runtime/launch (the launchers' variables) only.
getenv_hits=$(grep -rnE '\b(secure_)?getenv\s*\(' runtime --include='*.cpp' --include='*.hpp' |
  grep -vE '^runtime/(settings\.cpp|launch/)' || true)
[[ -z "$getenv_hits" ]] ||
  violation "runtime/ reads the environment only in settings.cpp and runtime/launch:"$'\n'"$getenv_hits"
# A child's end and exec are read and done in one place (runtime/common/child_process.cpp).
child_hits=$(grep -rnE '\b(WIFEXITED|WIFSIGNALED|WEXITSTATUS|WTERMSIG|execvp|execvpe|execv|execve)\b' \
  cli runtime spank-plugin python --include='*.cpp' --include='*.hpp' |
  grep -v '^runtime/common/child_process\.' || true)
[[ -z "$child_hits" ]] ||
  violation "wait statuses and exec belong to runtime/common/child_process.cpp:"$'\n'"$child_hits"
((status == 0)) && echo "layering rules hold"
exit $status
