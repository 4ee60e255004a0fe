#!/usr/bin/env bash
# Runs runtime_probe under a launcher and checks that every rank 0..N-1 reported once, with the
# right size, local rank and bootstrap, and that every rank's collectives were exact.
#   check_ranks.sh PROBE N BOOTSTRAP LAUNCHER...    (LAUNCHER "none" runs the probe bare)
set -euo pipefail
probe=$1 n=$2 bootstrap=$3
shift 3
if [[ "$1" == none ]]; then
  out=$(env -u PMIX_NAMESPACE -u PMIX_RANK -u OMPI_COMM_WORLD_RANK timeout 60 "$probe")
else
  out=$(timeout 120 "$@" "$probe")
fi
echo "$out"
lines=$(grep -c '^rank=' <<< "$out" || true)
[[ "$lines" == "$n" ]] || { echo "FAIL: expected $n rank lines, got $lines" >&2; exit 1; }
for ((r = 0; r < n; r++)); do
  # One node: the local rank is the rank, the local size the size.
  want="rank=$r size=$n local_rank=$r local_size=$n bootstrap=$bootstrap"
  grep -qx "$want backend=$([[ $n -gt 1 ]] && echo mpi || echo single)" <<< "$out" ||
    { echo "FAIL: expected a line [$want ...] for rank $r" >&2; exit 1; }
done
echo "PASS: $n ranks, bootstrap=$bootstrap, collectives exact"
