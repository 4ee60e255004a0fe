# Helpers for the multi-node tests (tests/integration/cluster's fixture): each check says what was
# expected and what was got. Source after the cluster's env.sh.
# fail, expect_eq, expect_contains, rank_output.
# shellcheck source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
expect_match() { # haystack regex what
  [[ "$1" =~ $2 ]] || fail "$3: expected to match /$2/, got [$1]"
}

# The value of variable $2 in task $1's lines of `srun -l env` output in file $3.
task_var() {
  sed -n "s/^ *$1: $2=//p" "$3" | head -1
}

# Waits (up to $2 seconds, default 240) for batch job $1 to end; prints its final state. Polling,
# because sbatch --wait checks only every 10 s or so.
wait_job() {
  local job=$1 limit=${2:-240} state="" i
  for ((i = 0; i < limit * 5; i++)); do
    state=$(timeout 10 scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
    sleep 0.2
  done
  echo "$state"
}

# link_back K: node K's link (cut by a test with `ip link set ${VETH_PREFIX}K down`) up again, and
# waits until Slurm has it idle: a cut of more than SlurmdTimeout (10 s) leaves it down for a while,
# and the next test's srun on it would fail or wait.
link_back() {
  ip link set "${VETH_PREFIX:-dtrv}$1" up 2>/dev/null || true
  bash "$(dirname "${BASH_SOURCE[0]}")/../cluster/cluster.sh" revive-node "$DTRAIN_CLUSTER_DIR" "$1" >/dev/null
}

# run_ranks OUT LIMIT COMMAND...: runs a job step's ranks (at most LIMIT seconds) with their output
# in OUT; true if they passed. Open MPI 4.1.4's TCP transport crashes MPI_Init now and then across
# these nodes (open-mpi/ompi#10734: a connect's EINPROGRESS taken for a failure, then a null function
# pointer; a bare MPI program too; ../shared/research/scale-on-localhost.md), in CI too: when the
# output shows that, once more (up to 3 runs: it crashed in two runs in a row once, 2026-12-06),
# saying so. Any other failure is the test's; a run expected to fail (a rank killed on purpose)
# fails again the same way.
run_ranks() {
  local out=$1 limit=$2 status try
  shift 2
  for try in 1 2 3; do
    status=0
    timeout -k 5 "$limit" "$@" >"$out" 2>&1 || status=$?
    ((status != 0)) || return 0
    grep -q "Open MPI failed to TCP connect to a peer" "$out" || return $status
    ((try < 3)) || return $status
    echo "(Open MPI's MPI_Init crashed: ompi#10734; once more)"
  done
}

# A scratch directory on the file system every node shares (as a cluster's home or scratch file
# system), removed when the test exits.
scratch_dir() {
  local d
  d=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-multinode.XXXXXX")
  chmod 755 "$d"
  echo "$d"
}

# launch BOOTSTRAP SRUN_ARGS...: sets `cmd` to the ranks of program "$probe" under srun, with PMIx
# (pmix: Open MPI inside, DTRAIN_TRANSPORT=mpi; pmix-tcp: no MPI, libdtrain's sockets) or
# torchrun-style (tcp: tcp_rank.sh, the rendezvous at the job's first node; the step ends when a
# rank fails, as a torchrun job's agents end it).
launch() {
  local bootstrap=$1 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  shift
  if [[ $bootstrap == pmix ]]; then
    cmd=(env DTRAIN_TRANSPORT=mpi srun --mpi=pmix "$@" "$probe")
  elif [[ $bootstrap == pmix-tcp ]]; then
    cmd=(srun --mpi=pmix "$@" "$probe")
  else
    cmd=(srun --mpi=none --kill-on-bad-exit=1 "--export=ALL,MASTER_PORT=$(bash "$here/../master_port.sh")"
      "$@" bash "$here/tcp_rank.sh" "$probe")
  fi
}
