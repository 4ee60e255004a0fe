#!/usr/bin/env bash
# The allreduce across nodes (issue 21) on a namespace cluster of its own: coll_bench --nodes on
# 2 nodes x 2 ranks and on 4 x 1, the link shaped to RATE (default 1gbit; "off": unshaped), Open
# MPI with two TCP sockets per peer (OMPI_MCA_btl_tcp_links=2: with one, both directions at once
# reach only 0.5-0.6 x one-way, docs/benchmarks.md). Each table is preceded by the machine's load.
# Reports only; fails only on #wrong or a failed run.
#   nodes_bench.sh CLUSTER_SH COLL_BENCH DIR [RATE]
# The cluster is DTRAIN_CLUSTER_INDEX (default 22, beside the ctest fixture's and link_check's),
# in DIR, and goes down at the end.
set -euo pipefail
cluster_sh=$1 coll_bench=$2 dir=$3 rate=${4:-1gbit}
export DTRAIN_CLUSTER_INDEX=${DTRAIN_CLUSTER_INDEX:-22}
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT
bash "$cluster_sh" up "$dir" --nodes 4 --cpus 2 >/dev/null
if [[ $rate != off ]]; then bash "$cluster_sh" shape "$dir" "$rate" >/dev/null; fi
# shellcheck source=/dev/null # written by cluster.sh up
source "$dir/env.sh"
export OMPI_MCA_btl_tcp_links=2
for layout in "2 2" "4 1"; do
  read -r nodes per <<<"$layout"
  echo "# ==== $nodes nodes x $per ranks, link $rate, OMPI_MCA_btl_tcp_links=2; uptime:$(uptime)"
  timeout 900 srun --mpi=pmix -N"$nodes" --ntasks-per-node="$per" "$coll_bench" --nodes \
    --json "$dir/coll_bench-$nodes-$per.json"
done
