#!/usr/bin/env bash
# A benchmark's --nodes mode across nodes on a namespace cluster of its own: coll_bench --nodes
# (issue 21: the allreduce, reduce_scatter and allgather tables, then the fused set) or
# messages_bench --nodes (issue 43: send/recv, alltoall(v), gather, scatter) on each layout of
# DTRAIN_BENCH_LAYOUTS (NODESxRANKS, default "2x2 4x1"; issue 34's: "4x2 8x1 8x2 16x1"),
# libdtrain on each of DTRAIN_BENCH_BACKENDS (default "mpi tcp": under PMIx with
# DTRAIN_TRANSPORT=mpi; "pmix": under PMIx as it chooses, sockets; "tcp": as under torchrun), the
# link shaped to RATE (default 1gbit; "off": unshaped), Open MPI with two TCP sockets per peer
# (OMPI_MCA_btl_tcp_links=2: with one, both directions at once reach only 0.5-0.6 x one-way,
# docs/benchmarks.md). Each run is preceded by the machine's load. DTRAIN_BENCH_ROWS (messages_bench:
# e.g. "alltoall") runs only the rows whose names begin with one of its comma-separated words.
# Reports only; fails only on #wrong or a failed run.
#   nodes_bench.sh CLUSTER_SH PROGRAM DIR [RATE]     (PROGRAM: coll_bench or messages_bench)
# The cluster is DTRAIN_CLUSTER_INDEX (default 22, beside the ctest fixture's and link_check's),
# in DIR, and goes down at the end.
set -euo pipefail
cluster_sh=$1 program=$2 dir=$3 rate=${4:-1gbit}
export DTRAIN_CLUSTER_INDEX=${DTRAIN_CLUSTER_INDEX:-22}
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT
layouts=${DTRAIN_BENCH_LAYOUTS:-2x2 4x1}
backends=${DTRAIN_BENCH_BACKENDS:-mpi tcp}
most=0
for layout in $layouts; do
  [[ $layout =~ ^([1-9][0-9]?)x([1-9])$ ]] ||
    { echo "DTRAIN_BENCH_LAYOUTS: expected NODESxRANKS (e.g. 8x2), got '$layout'" >&2; exit 2; }
  ((BASH_REMATCH[1] > most)) && most=${BASH_REMATCH[1]}
done
bash "$cluster_sh" up "$dir" --nodes "$most" --cpus 2 >/dev/null
if [[ $rate != off ]]; then bash "$cluster_sh" shape "$dir" "$rate" >/dev/null; fi
# shellcheck source=/dev/null # written by cluster.sh up
source "$dir/env.sh"
export OMPI_MCA_btl_tcp_links=2
# One rank of a torchrun-style job inside the srun step (MPI still starts, for the baselines):
# libdtrain takes the TCP bootstrap and backend, the rendezvous at the job's first node.
# shellcheck disable=SC2016 # expanded by each task's shell
tcp_rank='first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export DTRAIN_BOOTSTRAP=tcp MASTER_ADDR=$first RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS
export LOCAL_RANK=$SLURM_LOCALID LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE%%(*}
exec "$@"'
for layout in $layouts; do for bootstrap in $backends; do
  nodes=${layout%x*} per=${layout#*x}
  echo "# ==== $nodes nodes x $per ranks, libdtrain on $bootstrap, link $rate, $(env | grep '^OMPI_MCA_btl_tcp' | sort | tr '\n' ' ')uptime:$(uptime)"
  launch=("$program")
  [[ $bootstrap == tcp ]] && launch=(bash -c "$tcp_rank" tcp_rank "$program")
  transport=auto
  [[ $bootstrap == mpi ]] && transport=mpi
  # Open MPI 4.1.4's MPI_Init (the baselines need it) crashes now and then on these links
  # (open-mpi/ompi#10734, docs/benchmarks.md), leaving the other ranks waiting in it: the step
  # ends with the crashed rank, and one more try before the run counts as failed.
  for try in 1 2; do
    if MASTER_PORT=$(bash "$(dirname "$0")/../tests/integration/master_port.sh") \
      DTRAIN_TRANSPORT=$transport timeout 900 srun --mpi=pmix --kill-on-bad-exit=1 -N"$nodes" --ntasks-per-node="$per" \
      "${launch[@]}" --nodes --json "$dir/$(basename "$program")-$nodes-$per-$bootstrap.json"; then
      break
    fi
    ((try == 2)) && exit 1
    echo "# ==== the run failed; once more"
  done
done; done
