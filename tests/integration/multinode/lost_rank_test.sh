#!/usr/bin/env bash
# A rank SIGKILLed on the second node (issue #20), on the MPI communicator (DTRAIN_TRANSPORT=mpi;
# the sockets' own report is hierarchical_test.sh's and failures_test.sh's): under srun
# --mpi=pmix -N2 and mpirun inside sbatch -N2, with and without DTRAIN_SHM=0, every surviving rank, on either node, writes the line
# that names the lost rank and its host before the launcher kills it, and the job ends within 30 s.
# Rank 2 sees rank 3 end beside it (PeerWatch); ranks 0 and 1, on the other node, learn it from
# rank 2's alarm, and say so. The probe is tests/integration/runtime/runtime_probe.cpp (rank 3
# kills itself after a barrier; the others keep calling allreduce).
# Then through `dtrain submit` (each rank under its logger, the SPANK plugin's here), as a training
# loop fails: 1 MiB allreduces, exit at the first error (RUNTIME_PROBE_FAIL_FAST), 10 runs, every
# survivor's log naming rank 3 in each (lost_rank_runs.sh). Open MPI then ends the ranks whose
# connection to rank 3 breaks at once, before the alarm reaches them, and their loggers report it
# (records/rank_alarm.hpp); its abort can also have Slurm end the step before any alarm arrives
# (about 1 run in 10), and `dtrain submit` then writes the report of rank 2 into the logs of the
# ranks ended first (records/rank_lines.hpp, LostRankNote). bench_lost_rank_runs repeats it 50
# times.
#   lost_rank_test.sh CLUSTER_DIR PROBE DTRAIN
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
probe=$2 DTRAIN=$3
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT
export RUNTIME_PROBE_DIE_RANK=3 RUNTIME_PROBE_SIGNAL=KILL DTRAIN_TIMEOUT=5 DTRAIN_TRANSPORT=mpi

# check OUT SECONDS: ranks 0-2 each reported rank 3 lost, on its host, within the time.
check() {
  local out=$1 took=$2 host r line
  ((took < 30)) || fail "the job took $took s to end; expected under 30: $(cat "$out")"
  host=$(sed -n 's/^placement: rank=3 .* host=\([^ ]*\) .*/\1/p' "$out")
  [[ -n $host ]] || fail "no placement line of rank 3 in: $(cat "$out")"
  for r in 0 1 2; do
    line=$(grep -m1 -E "^dtrain: .*, rank $r of 4[,)].*: peer process lost: " "$out") ||
      fail "rank $r wrote no line naming the lost rank: $(cat "$out")"
    expect_match "$line" "peer process lost: rank 3 \\(on $host\\) was killed or exited without finalizing" "rank $r"
  done
  for r in 0 1; do
    line=$(grep -m1 -E "^dtrain: .*, rank $r of 4[,)].*: peer process lost: " "$out")
    expect_contains "$line" "without finalizing (seen by rank 2 on that node); " "rank $r, on the other node"
  done
  echo "ok: ranks 0-2 named rank 3 on $host; the job ended in $took s"
}

for shm in 1 0; do
  echo "== srun --mpi=pmix -N2 --ntasks-per-node=2, rank 3 killed, DTRAIN_SHM=$shm"
  start=$SECONDS
  DTRAIN_SHM=$shm timeout -k 5 90 srun --mpi=pmix -N2 --ntasks-per-node=2 "$probe" \
    >"$work/srun$shm" 2>&1 && fail "srun succeeded with rank 3 killed: $(cat "$work/srun$shm")"
  check "$work/srun$shm" $((SECONDS - start))

  echo "== mpirun inside sbatch -N2 --ntasks-per-node=2, rank 3 killed, DTRAIN_SHM=$shm"
  start=$SECONDS
  job=$(DTRAIN_SHM=$shm timeout 10 sbatch --parsable -N2 --ntasks-per-node=2 -o "$work/mpirun$shm" \
    --wrap "mpirun -x DTRAIN_TRANSPORT=mpi $(printf '%q' "$probe")")
  expect_eq FAILED "$(wait_job "$job" 90)" "sbatch mpirun job $job: $(cat "$work/mpirun$shm" 2>/dev/null)"
  check "$work/mpirun$shm" $((SECONDS - start))
done
echo "== dtrain submit, 2 x 2, rank 3 killed in a loop of 1 MiB allreduces that exits at the first error: 10 runs"
bash "$(dirname "$0")/lost_rank_runs.sh" "$1" "$probe" "$DTRAIN" 10
echo PASS
