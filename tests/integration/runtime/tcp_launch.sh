#!/usr/bin/env bash
# A torchrun-style launcher for tests: starts N copies of PROGRAM on this machine with
# MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE (and no launcher's PMIx or MPI
# variables), waits for all of them and exits with the first non-zero status. As torchrun's agent
# does, a failure ends the others: they get 10 s to report their own errors, then SIGKILL (a
# stopped process ignores anything else).
#   tcp_launch.sh N PROGRAM [ARGS...]
set -uo pipefail
n=$1
shift
port=$(bash "$(dirname "$0")/../master_port.sh")
pids=()
for ((r = 0; r < n; r++)); do
  env -u PMIX_NAMESPACE -u PMIX_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMI_RANK \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r \
    LOCAL_WORLD_SIZE=$n "$@" &
  pids+=($!)
done
status=0
killer=
for ((i = 0; i < n; i++)); do
  wait -n "${pids[@]}"
  s=$?
  if ((s != 0 && status == 0)); then
    status=$s
    (sleep 10 && kill -KILL "${pids[@]}" 2>/dev/null) &
    killer=$!
  fi
done
[[ -n $killer ]] && kill "$killer" 2>/dev/null
exit $status
