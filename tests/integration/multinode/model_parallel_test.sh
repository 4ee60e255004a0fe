#!/usr/bin/env bash
# Model parallelism across nodes (issue 43): tests/integration/runtime/model_parallel_probe.cpp on
# 2 nodes x 2 ranks and 4 x 2, on the MPI backend (srun --mpi=pmix, DTRAIN_TRANSPORT=mpi) and on
# libdtrain's sockets (srun --mpi=pmix; and torchrun-style on 2 x 2): messages between every pair,
# an uneven alltoallv, gather/scatter/reduce, and "tensor" and "data" groups, a subgroup of the
# first and last ranks and a nested group spanning nodes, every value exact. Then a rank
# SIGKILLed while the others wait in a receive from it and in an alltoallv on the MPI backend:
# every survivor names it.
#   model_parallel_test.sh CLUSTER_DIR PROBE exact|faults
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
probe=$2 part=${3:-}
[[ $part =~ ^(exact|faults)$ ]] || fail "part: expected exact or faults, got '$part'"
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT

if [[ $part == exact ]]; then
  for run in "pmix 2 2" "pmix-tcp 2 2" "tcp 2 2" "pmix 4 2" "pmix-tcp 4 2"; do
    read -r bootstrap nodes per <<<"$run"
    n=$((nodes * per))
    echo "== $bootstrap: srun -N$nodes --ntasks-per-node=$per"
    launch "$bootstrap" -N"$nodes" --ntasks-per-node="$per"
    run_ranks "$work/out" 120 "${cmd[@]}" || fail "srun exited $?: $(cat "$work/out")"
    expect_eq "$n" "$(grep -c '^model_parallel_probe: rank [0-9]*: ok: messages, alltoallv, rooted and groups exact$' "$work/out")" \
      "ranks reporting ok in $(cat "$work/out")"
    expect_eq "$nodes" "$(sed -n 's/^placement: .* host=\([a-z0-9]*\) .*/\1/p' "$work/out" | sort -u | wc -l)" \
      "nodes the ranks ran on, in $(cat "$work/out")"
    want=$([[ $bootstrap == pmix ]] && echo mpi || echo tcp)
    expect_eq "$n" "$(grep -c "backend=$want\$" "$work/out")" "ranks on the $want backend in $(cat "$work/out")"
    echo "ok: $n ranks on $nodes nodes, every message, alltoallv, rooted collective and group exact"
  done
fi

# Rank 3 (the second node's last rank on 2 x 2) killed: each survivor's own call fails naming it.
# MPI: the peer watch sees the process end; the sockets: its connections close.
if [[ $part == faults ]]; then
  # On the MPI backend (srun --mpi=pmix), whose peer watch and alarm tell every rank. On
  # libdtrain's sockets a receive from a rank never heard from connects to it (mailbox.hpp), so
  # its end is seen too: tests/integration/runtime's runtime_tcp_lost_rank_in_recv and
  # _in_alltoallv check that on one node.
  for run in "pmix recv" "pmix alltoallv"; do
    read -r bootstrap call <<<"$run"
    echo "== $bootstrap: rank 3 SIGKILLed while the others wait in $call"
    launch "$bootstrap" -N2 --ntasks-per-node=2
    MODEL_PROBE_DIE_RANK=3 MODEL_PROBE_CALL=$call DTRAIN_TIMEOUT=20 run_ranks "$work/kill" 90 "${cmd[@]}" &&
      fail "srun succeeded with rank 3 killed: $(cat "$work/kill")"
    for r in 0 1 2; do
      grep -qE "^model_parallel_probe: rank $r: .*rank 3 \\(on [a-z0-9]+\\)[: ].*(killed|closed|ended)" \
        "$work/kill" || fail "rank $r did not name rank 3 in: $(cat "$work/kill")"
    done
    echo "ok: ranks 0-2 named rank 3"
  done
fi
echo PASS
