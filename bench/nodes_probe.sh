#!/usr/bin/env bash
# Correctness of the collectives on 8 nodes (issue 34, item 5), in the benchmark label because an
# 8-node cluster and its runs take longer than CI allows beside the rest: the runtime probe
# (tests/integration/runtime/runtime_probe.cpp: every collective, op and dtype exact, 1000 to
# 20 M elements) on 8 x 1 and 8 x 2 under srun --mpi=pmix, on the MPI communicator
# (DTRAIN_TRANSPORT=mpi) and on libdtrain's sockets, DTRAIN_ALGO hierarchical and unset; then a
# rank SIGKILLed on 8 x 2 under the ring: every survivor names it.
#   nodes_probe.sh CLUSTER_SH PROBE DIR
# The cluster is DTRAIN_CLUSTER_INDEX (default 23), in DIR, and goes down at the end.
set -euo pipefail
cluster_sh=$1 probe=$2 dir=$3
export DTRAIN_CLUSTER_INDEX=${DTRAIN_CLUSTER_INDEX:-23}
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT
bash "$cluster_sh" up "$dir" --nodes 8 --cpus 2 >/dev/null
# shellcheck source=/dev/null # written by cluster.sh up
source "$dir/env.sh"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# try OUT ARGS...: runs srun ARGS into OUT; once more when Open MPI 4.1.4's MPI_Init crashed
# (open-mpi/ompi#10734), saying so.
try() {
  local out=$1
  shift
  timeout -k 5 600 srun --mpi=pmix --kill-on-bad-exit=1 "$@" >"$out" 2>&1 && return 0
  grep -q "Open MPI failed to TCP connect to a peer" "$out" || return 1
  echo "(Open MPI's MPI_Init crashed: ompi#10734; once more)"
  timeout -k 5 600 srun --mpi=pmix --kill-on-bad-exit=1 "$@" >"$out" 2>&1
}
for per in 1 2; do
  for transport in mpi tcp; do
    for algo in hierarchical ""; do
      n=$((8 * per))
      echo "== 8 x $per, DTRAIN_TRANSPORT=$transport, DTRAIN_ALGO=${algo:-unset}"
      DTRAIN_TRANSPORT=$transport DTRAIN_ALGO=$algo try "$dir/out" -N8 --ntasks-per-node="$per" \
        "$probe" || fail "srun exited: $(cat "$dir/out")"
      # One rank per node on the TCP backend keeps its own ring unless forced.
      want=hierarchical
      [[ $transport == tcp && $per == 1 && -z $algo ]] && want=tcp
      got=$(grep -c "allreduce=$want\$" "$dir/out" || true)
      ((got == n)) || fail "$got of $n ranks on $want: $(cat "$dir/out")"
      echo "ok: $n ranks, allreduce $want, every collective exact"
    done
  done
done
echo "== 8 x 2, rank 11 SIGKILLed, DTRAIN_ALGO=hierarchical (the ring)"
RUNTIME_PROBE_DIE_RANK=11 RUNTIME_PROBE_SIGNAL=KILL DTRAIN_TRANSPORT=mpi DTRAIN_ALGO=hierarchical \
  DTRAIN_TIMEOUT=5 try "$dir/kill" -N8 --ntasks-per-node=2 "$probe" &&
  fail "srun succeeded with rank 11 killed: $(cat "$dir/kill")"
for ((r = 0; r < 16; r++)); do
  ((r == 11)) && continue
  grep -qE "rank $r[ ,:)].*rank 11 \\(on [a-z0-9]+\\) was killed" "$dir/kill" ||
    fail "rank $r did not name rank 11: $(cat "$dir/kill")"
done
echo "ok: every other rank named rank 11"
echo PASS
