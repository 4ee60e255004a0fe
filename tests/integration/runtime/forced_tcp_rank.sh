#!/usr/bin/env bash
# Runs PROGRAM as one rank of a torchrun-style job inside another launcher's job (Open MPI's
# mpirun, MPICH's Hydra mpiexec or srun --mpi=pmix): RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE
# come from that launcher's variables, the rendezvous from MASTER_ADDR/MASTER_PORT, and
# DTRAIN_BOOTSTRAP=tcp must make libdtrain use them although the launcher's PMIx server or PMI is
# there too (one node: local rank = rank).
#   forced_tcp_rank.sh PROGRAM [ARGS...]
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:?none of OMPI_COMM_WORLD_RANK, PMI_RANK and SLURM_PROCID is set}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:?none of OMPI_COMM_WORLD_SIZE, PMI_SIZE and SLURM_NTASKS is set}}}
export DTRAIN_BOOTSTRAP=tcp MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:?MASTER_PORT is not set}
export RANK=$rank WORLD_SIZE=$size LOCAL_RANK=$rank LOCAL_WORLD_SIZE=$size
exec "$@"
