#!/usr/bin/env bash
# One rank of a torchrun-style job started by `srun --mpi=none` across nodes: RANK, WORLD_SIZE,
# LOCAL_RANK, LOCAL_WORLD_SIZE and the node rank from Slurm's task variables, the rendezvous at
# MASTER_ADDR (the job's first node, as the job's batch scripts set it) and MASTER_PORT, as
# torchrun's agents would set them.
#   tcp_rank.sh PROGRAM [ARGS...]    (MASTER_PORT from the caller)
set -euo pipefail
export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID
export LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE%%(*} GROUP_RANK=$SLURM_NODEID
first_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=${MASTER_ADDR:-$first_node} MASTER_PORT=${MASTER_PORT:?MASTER_PORT is not set}
exec "$@"
