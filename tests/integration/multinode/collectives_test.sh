#!/usr/bin/env bash
# init() and every collective across nodes, on each bootstrap: srun --mpi=pmix -N2 (PMIx and
# libdtrain's sockets, the default), -N4 on the sockets and on MPI (DTRAIN_TRANSPORT=mpi), mpirun
# inside sbatch -N2 on MPI, and the torchrun-style TCP rendezvous at node1 with ranks on both
# nodes. The probe
# (tests/integration/runtime/runtime_probe.cpp) checks every collective exactly and prints where
# init() placed it and how its allreduces travel; every rank's place must be right, and shared
# memory must be used alone only when all ranks share one node (2 nodes of 2 ranks: hierarchical,
# tests/integration/multinode/hierarchical_test.sh).
# Two-node steps name node1 and node2 (-w): the checks name each rank's node, and Slurm may
# otherwise place a step on node3 while the previous step's nodes are still completing.
#   collectives_test.sh CLUSTER_DIR PROBE
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
probe=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT

# check OUT NODES PER_NODE BOOTSTRAP TRANSPORT: every rank's two lines from the probe.
check() {
  local out=$1 nodes=$2 per=$3 bootstrap=$4 transport=$5 n r line
  n=$((nodes * per))
  expect_eq $n "$(grep -c '^rank=' "$out")" "rank lines in $(cat "$out")"
  # Ranks that finish (and leave) in their own time are no loss (the peer watch and alarm).
  expect_eq 0 "$(grep -c 'peer process lost' "$out")" "lost-peer lines in $(cat "$out")"
  for ((r = 0; r < n; r++)); do
    line=$(grep "^rank=$r " "$out") || fail "no line of rank $r in: $(cat "$out")"
    expect_eq "rank=$r size=$n local_rank=$((r % per)) local_size=$per bootstrap=$bootstrap" "$line" "rank $r"
    line=$(grep "^placement: rank=$r " "$out") || fail "no placement of rank $r"
    expect_eq "placement: rank=$r node_id=$((r / per)) host=node$((r / per + 1)) allreduce=$transport" \
      "$line" "rank $r placement"
  done
  echo "ok: $n ranks on $nodes nodes, bootstrap $bootstrap, allreduce over $transport, collectives exact"
}

echo "== srun --mpi=pmix -N2 --ntasks-per-node=2"
run_ranks "$work/srun" 120 srun --mpi=pmix -N2 -w node1,node2 --ntasks-per-node=2 "$probe" ||
  fail "srun exited $?: $(cat "$work/srun")"
check "$work/srun" 2 2 pmix hierarchical # nodes of 2 ranks: shared memory, then across nodes

echo "== srun --mpi=pmix -N4 --ntasks-per-node=1"
run_ranks "$work/srun4" 120 srun --mpi=pmix -N4 --ntasks-per-node=1 "$probe" ||
  fail "srun exited $?: $(cat "$work/srun4")"
check "$work/srun4" 4 1 pmix tcp

echo "== srun --mpi=pmix -N4 --ntasks-per-node=1, DTRAIN_TRANSPORT=mpi"
DTRAIN_TRANSPORT=mpi run_ranks "$work/srun4mpi" 120 srun --mpi=pmix -N4 --ntasks-per-node=1 "$probe" ||
  fail "srun exited $?: $(cat "$work/srun4mpi")"
check "$work/srun4mpi" 4 1 pmix hierarchical # one rank per node: the ring among nodes (large allreduces)

echo "== one node of the cluster: shared memory between its two ranks"
run_ranks "$work/one" 120 srun --mpi=pmix -N1 --ntasks-per-node=2 -w node2 "$probe" ||
  fail "srun exited $?: $(cat "$work/one")"
sed -i 's/node_id=0 host=node2/node_id=0 host=node1/' "$work/one" # one node: its id is 0
check "$work/one" 1 2 pmix "shared memory"

echo "== mpirun inside sbatch -N2 --ntasks-per-node=2, DTRAIN_TRANSPORT=mpi"
job=$(timeout 10 sbatch --parsable -N2 -w node1,node2 --ntasks-per-node=2 -o "$work/mpirun" \
  --wrap "mpirun -x DTRAIN_TRANSPORT=mpi $(printf '%q' "$probe")")
expect_eq COMPLETED "$(wait_job "$job")" "sbatch mpirun job $job: $(cat "$work/mpirun" 2>/dev/null)"
check "$work/mpirun" 2 2 pmix hierarchical

echo "== torchrun-style TCP rendezvous at node1, ranks on node1 and node2"
timeout -k 5 120 srun --mpi=none -N2 -w node1,node2 --ntasks-per-node=2 --export=ALL,MASTER_PORT=$(bash "$here/../master_port.sh") \
  bash "$here/tcp_rank.sh" "$probe" >"$work/tcp" 2>&1 || fail "srun exited $?: $(cat "$work/tcp")"
check "$work/tcp" 2 2 tcp hierarchical # nodes of 2 ranks: shared memory, then the sockets
echo PASS
