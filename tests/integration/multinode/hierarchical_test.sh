#!/usr/bin/env bash
# The hierarchical collectives across nodes (issue 21; runtime/comm/algorithms/hierarchy.hpp): the
# runtime probe (tests/integration/runtime/runtime_probe.cpp: every collective, op and dtype
# exact, 1000 to 20 M elements) on 2 nodes x 2 ranks (the relay), 4 x 1 and 4 x 2 (the ring among
# node peers), under srun --mpi=pmix on the MPI
# communicator (DTRAIN_TRANSPORT=mpi; "pmix") and on libdtrain's sockets (the default there;
# "pmix-tcp"), under mpirun inside sbatch, and torchrun-style (srun --mpi=none, the TCP rendezvous: the shares cross
# nodes over the TCP backend's sockets), with DTRAIN_ALGO forcing hierarchical and flat and left
# to choose. Exact results on integer-valued data are the same bits on both paths. Then a rank
# SIGKILLed under forced hierarchical (every allreduce takes it): the others name it; and a rank
# stopped: each other rank's deadline error names the rank it waits for; on both bootstraps.
# In four parts, each a ctest test of its own (each within the multinode tests' 300 s: together
# they take about 290 s on a quiet 2-core VM):
#   hierarchical_test.sh CLUSTER_DIR PROBE exact-mpi|exact-sockets|uneven|faults
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
probe=$2 part=${3:-}
[[ $part =~ ^(exact-mpi|exact-sockets|uneven|faults)$ ]] || fail "part: expected exact-mpi, exact-sockets, uneven or faults, got '$part'"
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT

# run BOOTSTRAP NODES PER_NODE ALGO TRANSPORT: the probe passes on every rank, which reports
# TRANSPORT.
run() {
  local bootstrap=$1 nodes=$2 per=$3 algo=$4 transport=$5 out n
  out="$work/run-$bootstrap-$nodes-$per-${algo:-auto}"
  echo "== $bootstrap: srun -N$nodes --ntasks-per-node=$per, DTRAIN_ALGO=${algo:-unset}"
  launch "$bootstrap" -N"$nodes" --ntasks-per-node="$per"
  DTRAIN_ALGO=$algo run_ranks "$out" 240 "${cmd[@]}" || fail "srun exited $?: $(cat "$out")"
  n=$((nodes * per))
  expect_eq $n "$(grep -c "bootstrap=${bootstrap%-tcp}\$" "$out")" "ranks on $bootstrap in $(cat "$out")"
  expect_eq $n "$(grep -c "allreduce=$transport\$" "$out")" "ranks on $transport in $(cat "$out")"
  echo "ok: $n ranks, allreduce $transport, collectives exact"
}
if [[ $part == exact-mpi ]]; then
  run pmix 2 2 hierarchical hierarchical
  run pmix 2 2 flat mpi
  run pmix 2 2 "" hierarchical # auto: nodes with 2 ranks each
  run pmix 4 1 hierarchical hierarchical
  run pmix 4 1 "" hierarchical # auto: the ring among nodes (large allreduces)
  run pmix 4 2 "" hierarchical # the ring among each local rank's peers
  run pmix 4 1 flat mpi

  echo "== mpirun inside sbatch -N2 --ntasks-per-node=2, DTRAIN_ALGO=hierarchical"
  job=$(DTRAIN_ALGO=hierarchical timeout 10 sbatch --parsable -N2 --ntasks-per-node=2 \
    -o "$work/mpirun" --wrap "mpirun -x DTRAIN_TRANSPORT=mpi $(printf '%q' "$probe")")
  expect_eq COMPLETED "$(wait_job "$job")" "sbatch mpirun job $job: $(cat "$work/mpirun" 2>/dev/null)"
  expect_eq 4 "$(grep -c 'allreduce=hierarchical$' "$work/mpirun")" "ranks in $(cat "$work/mpirun")"
  echo "ok: mpirun, 4 ranks hierarchical, collectives exact"
fi

if [[ $part == exact-sockets ]]; then
  run pmix-tcp 2 2 "" hierarchical
  run pmix-tcp 4 1 "" tcp # one rank per node: its own ring
  run tcp 2 2 hierarchical hierarchical
  run tcp 2 2 flat tcp
  run tcp 2 2 "" hierarchical
  run tcp 4 1 hierarchical hierarchical
  run tcp 4 2 "" hierarchical
  run tcp 4 1 flat tcp
fi


# Uneven nodes, as a scheduler may give: the allreduce still takes the hierarchy (the local ranks
# below the smallest node's count carry the shares), reduce_scatter and allgather go flat.
# (Under PMIx only: torchrun itself starts the same number of ranks on every node.)
if [[ $part == uneven ]]; then
  for uneven in "hierarchical pmix -N2 -n3" "hierarchical pmix-tcp -N2 -n3" "auto pmix -N3 -n5" \
    "auto pmix-tcp -N3 -n5"; do
    read -r algo bootstrap nodes ranks <<<"$uneven"
    [[ $algo == auto ]] && algo=""
    echo "== $bootstrap: srun $nodes $ranks --distribution=block (uneven), DTRAIN_ALGO=${algo:-unset}"
    launch "$bootstrap" "$nodes" "$ranks" --distribution=block
    DTRAIN_ALGO=$algo run_ranks "$work/uneven" 240 "${cmd[@]}" ||
      fail "srun exited $?: $(cat "$work/uneven")"
    expect_eq "${ranks#-n}" "$(grep -c 'allreduce=hierarchical$' "$work/uneven")" \
      "ranks taking the hierarchy in $(cat "$work/uneven")"
    echo "ok: ${ranks#-n} ranks on uneven nodes, allreduce hierarchical, collectives exact"
  done

fi

if [[ $part == faults ]]; then
  export RUNTIME_PROBE_DIE_RANK=3 DTRAIN_ALGO=hierarchical
  for bootstrap in pmix pmix-tcp tcp; do
    echo "== $bootstrap: rank 3 SIGKILLed, DTRAIN_ALGO=hierarchical"
    launch $bootstrap -N2 --ntasks-per-node=2
    start=$SECONDS
    RUNTIME_PROBE_SIGNAL=KILL DTRAIN_TIMEOUT=5 timeout -k 5 90 "${cmd[@]}" >"$work/kill" 2>&1 &&
      fail "srun succeeded with rank 3 killed: $(cat "$work/kill")"
    ((SECONDS - start < 30)) || fail "the job took $((SECONDS - start)) s to end: $(cat "$work/kill")"
    for r in 0 1 2; do
      # MPI: the peer watch and alarm see the process end; TCP: its connections close.
      if [[ $bootstrap == pmix ]]; then
        lost="^dtrain: .*, rank $r of 4[,)].*: peer process lost: rank 3 \\(on [a-z0-9]+\\) was killed"
      else
        lost="^runtime_probe: rank $r: dtrain: allreduce #[0-9]+ \\([0-9]+ bytes, rank $r of 4\\): allreduce: tcp: missing ranks: [0-9, ]+; rank 3 \\(on [a-z0-9]+\\) closed its connection \\(it exited or was killed\\)"
      fi
      grep -qE "$lost" "$work/kill" || fail "rank $r wrote no line matching /$lost/: $(cat "$work/kill")"
    done
    echo "ok: ranks 0-2 named rank 3"

    echo "== $bootstrap: rank 3 stopped (SIGSTOP), DTRAIN_ALGO=hierarchical, DTRAIN_TIMEOUT=3"
    launch $bootstrap -N2 --ntasks-per-node=2
    RUNTIME_PROBE_SIGNAL=STOP DTRAIN_TIMEOUT=3 run_ranks "$work/stop" 60 "${cmd[@]}" &&
      fail "srun succeeded with rank 3 stopped: $(cat "$work/stop")"
    # Rank 2 waits for rank 3 in its node's reduction. On 2 nodes the shares are relayed: rank 0
    # (local rank 0 of node 0) waits for share 1's result from rank 3 (local rank 1 of node 1),
    # rank 1 for share 0's from rank 2 (which itself waits). Rank 1's own deadline and rank 2's
    # word that it stopped because of rank 3 arrive within the same instant: either text is right.
    grep -qE "not complete after 3 s \\(DTRAIN_TIMEOUT\\)" "$work/stop" || fail "no deadline error: $(cat "$work/stop")"
    for want in "2 of 4.*missing ranks: 3 \\(on this node, not yet in this allreduce\\)" \
      "0 of 4.*missing ranks: 3 \\(on other nodes; their share of this allreduce has not arrived\\)" \
      "1 of 4.*missing ranks: (2 \\(on other nodes; their share of this allreduce has not arrived\\)|.*rank 3 \\(on [a-z0-9]+\\) did not answer.*rank 2 \\(on [a-z0-9]+\\) stopped because of it)"; do
      grep -qE "rank $want" "$work/stop" || fail "no line matching /rank $want/ in: $(cat "$work/stop")"
    done
    echo "ok: each rank's deadline error names the rank it waits for"
  done

  # The ring among nodes, a rank SIGKILLed: every survivor names it. On the MPI backend its
  # node-mate sees it go and raises the peer alarm (4 x 2, rank 5); with one rank per node nothing
  # on its node watches it, and MPI tells the survivors nothing before the launcher ends them (see
  # docs/multinode.md): there libdtrain's sockets name it (4 x 1, rank 2; under srun --mpi=pmix,
  # whose step outlives a killed task by about a second: torchrun-style, srun --kill-on-bad-exit
  # may end the others first).
  for run in "pmix 2 5" "pmix-tcp 1 2"; do
    read -r bootstrap per die <<<"$run"
    echo "== $bootstrap: 4 x $per, rank $die SIGKILLed, DTRAIN_ALGO=hierarchical (the ring)"
    launch "$bootstrap" -N4 --ntasks-per-node="$per"
    # run_ranks: once more if Open MPI's own start crashed (lib.sh), twice on 4 x 2 in CI's runs.
    RUNTIME_PROBE_DIE_RANK=$die RUNTIME_PROBE_SIGNAL=KILL DTRAIN_TIMEOUT=5 run_ranks "$work/ring-kill" 90 \
      "${cmd[@]}" && fail "srun succeeded with rank $die killed: $(cat "$work/ring-kill")"
    for ((r = 0; r < 4 * per; r++)); do
      ((r == die)) && continue
      grep -qE "rank $r[ ,:)].*rank $die \(on [a-z0-9]+\) (was killed|closed its connection)" \
        "$work/ring-kill" || fail "rank $r did not name rank $die: $(cat "$work/ring-kill")"
    done
    echo "ok: every other rank named rank $die"
  done
fi
echo PASS
