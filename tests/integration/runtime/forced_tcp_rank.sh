#!/usr/bin/env bash
# Runs PROGRAM as one rank of a torchrun-style job inside another launcher's job (mpirun or srun
# --mpi=pmix): RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE come from that launcher's variables,
# the rendezvous from MASTER_ADDR/MASTER_PORT, and DTRAIN_BOOTSTRAP=tcp must make libdtrain use
# them although the launcher's PMIx server is there too (one node: local rank = rank).
#   forced_tcp_rank.sh PROGRAM [ARGS...]
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:?neither OMPI_COMM_WORLD_RANK nor SLURM_PROCID is set}}
size=${OMPI_COMM_WORLD_SIZE:-${SLURM_NTASKS:?neither OMPI_COMM_WORLD_SIZE nor SLURM_NTASKS is set}}
export DTRAIN_BOOTSTRAP=tcp MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:?MASTER_PORT is not set}
export RANK=$rank WORLD_SIZE=$size LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$size
exec "$@"
