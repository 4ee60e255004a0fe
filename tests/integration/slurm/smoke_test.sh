#!/usr/bin/env bash
# Smoke test of the private Slurm cluster that cluster.sh starts: plain srun, PMIx under the fake
# CPU count, fake GPUs, sbatch with an output file and, when mpicc is there, an MPI program launched
# directly by srun.
#
# Usage: smoke_test.sh [DIR]   (DIR: the cluster's directory; without it SLURM_CONF must be set,
#                               e.g. by sourcing DIR/env.sh)
#
# Every Slurm command runs under `timeout`: a job that can never fit is not rejected, it pends
# forever.
set -euo pipefail

if (($# > 0)); then
  # shellcheck source=/dev/null # written by cluster.sh start
  source "$1/env.sh"
fi
[[ -n ${SLURM_CONF:-} ]] || {
  echo "smoke_test.sh: SLURM_CONF is not set: pass the cluster's DIR or source DIR/env.sh" >&2
  exit 2
}

readonly T=60
failures=0
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-slurm-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

pass() { echo "PASS: $1"; }
fail() {
  echo "FAIL: $1" >&2
  echo "  expected: $(printf '%q' "$2")" >&2
  echo "  got:      $(printf '%q' "$3")" >&2
  failures=$((failures + 1))
}

# check NAME EXPECTED COMMAND...: runs the command, compares its stdout with EXPECTED.
check() {
  local name=$1 expected=$2 got rc=0
  shift 2
  got=$("$@" 2>"$work/stderr") || rc=$?
  if ((rc != 0)); then
    fail "$name (exit status $rc; stderr: $(tr '\n' ' ' <"$work/stderr"))" "$expected" "$got"
  elif [[ $got != "$expected" ]]; then
    fail "$name" "$expected" "$got"
  else
    pass "$name"
  fi
}

# Tasks print in any order; pipefail (set above) keeps the command's own failure.
sorted() { "$@" | sort; }

host=$(hostname)
node_line=$(timeout "$T" sinfo -h -N -o '%c %G' | head -1) || {
  echo "FAIL: sinfo cannot reach the cluster (SLURM_CONF=$SLURM_CONF)" >&2
  exit 1
}
cpus=${node_line%% *}
gres=${node_line#* }
echo "cluster: SLURM_CONF=$SLURM_CONF; node: $cpus CPUs, gres $gres"

check "srun -n 2 hostname" "$host"$'\n'"$host" timeout "$T" srun -n 2 hostname

# 8 ranks need 8 CPUs; on a cluster that tells the truth about a small machine, overcommit.
overcommit=()
if ((cpus < 8)); then
  overcommit=(--overcommit)
fi
check "srun -n 8 --mpi=pmix true" "" timeout "$T" srun -n 8 "${overcommit[@]}" --mpi=pmix true

gpus=0
if [[ $gres =~ gpu:([0-9]+) ]]; then
  gpus=${BASH_REMATCH[1]}
fi
if ((gpus >= 2)); then
  check "srun -n 2 --gpus-per-task=1: one GPU per task" $'0\n1' \
    sorted timeout "$T" srun -n 2 --gpus-per-task=1 printenv CUDA_VISIBLE_DEVICES
else
  echo "SKIP: GPU check (the cluster has $gpus fake GPUs, it needs 2)"
fi

# sbatch, polling the job state: `sbatch --wait` polls every 10 s.
cat >"$work/job.sh" <<'EOF'
#!/bin/bash
echo "dtrain smoke job $SLURM_JOB_ID ntasks=$SLURM_NTASKS"
srun hostname
EOF
sbatch_state() {
  local job_id=$1 state="" deadline=$((SECONDS + T))
  while ((SECONDS < deadline)); do
    state=$(timeout "$T" scontrol show job "$job_id" |
      sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p') || true
    case $state in
      PENDING | CONFIGURING | RUNNING | COMPLETING | "") sleep 0.1 ;;
      *) break ;;
    esac
  done
  echo "$state"
}
if ! job_id=$(timeout "$T" sbatch --parsable -n 2 -o "$work/job-%j.out" -D "$work" \
  "$work/job.sh" 2>"$work/stderr"); then
  fail "sbatch (stderr: $(tr '\n' ' ' <"$work/stderr"))" "a job id" "$job_id"
else
  job_id=${job_id%%;*}
  state=$(sbatch_state "$job_id")
  if [[ $state != COMPLETED ]]; then
    fail "sbatch job $job_id state" COMPLETED "$state"
    timeout "$T" scancel "$job_id" || true
  else
    pass "sbatch job $job_id state"
    check "sbatch job output" "dtrain smoke job $job_id ntasks=2"$'\n'"$host"$'\n'"$host" \
      cat "$work/job-$job_id.out"
  fi
fi

# An MPI program started directly by srun: PMIx is what the runtime relies on.
if command -v mpicc >/dev/null; then
  cat >"$work/mpi_hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int one = rank + 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d/%d sum=%d\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}
EOF
  if mpicc -o "$work/mpi_hello" "$work/mpi_hello.c" 2>"$work/stderr"; then
    check "srun --mpi=pmix -n 2 mpi_hello" $'rank 0/2 sum=3\nrank 1/2 sum=3' \
      sorted timeout "$T" srun --mpi=pmix -n 2 "$work/mpi_hello"
  else
    fail "mpicc mpi_hello.c (stderr: $(tr '\n' ' ' <"$work/stderr"))" "a program" "none"
  fi
else
  echo "SKIP: MPI check (no mpicc)"
fi

if ((failures > 0)); then
  echo "smoke_test.sh: $failures check(s) failed" >&2
  exit 1
fi
echo "smoke_test.sh: all checks passed"
