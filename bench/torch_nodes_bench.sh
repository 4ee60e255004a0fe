#!/usr/bin/env bash
# torch_allreduce_bench.py (backend "dtrain" against gloo in one job) across nodes, on a namespace
# cluster of its own: 2 nodes x 2 ranks, the link shaped to RATE (default 1gbit; "off": unshaped),
# the ranks started torchrun-style (tests/integration/multinode/tcp_rank.sh: the rendezvous at the
# job's first node). The machine's load is printed first. Reports only; fails only on a failed run.
#   torch_nodes_bench.sh CLUSTER_SH PYTHON DIR [RATE]    (PYTHONPATH: where dtrain.torch is)
# The cluster is DTRAIN_CLUSTER_INDEX (default 24, beside the ctest fixture's and the other
# benchmarks' 21-23), in DIR, and goes down at the end.
set -euo pipefail
cluster_sh=$1 python=$2 dir=$3 rate=${4:-1gbit}
here=$(cd "$(dirname "$0")" && pwd)
export DTRAIN_CLUSTER_INDEX=${DTRAIN_CLUSTER_INDEX:-24}
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT
bash "$cluster_sh" up "$dir" --nodes 2 --cpus 2 >/dev/null
if [[ $rate != off ]]; then bash "$cluster_sh" shape "$dir" "$rate" >/dev/null; fi
# shellcheck source=/dev/null # written by cluster.sh up
source "$dir/env.sh"
echo "# ==== 2 nodes x 2 ranks, link $rate, uptime:$(uptime)"
MASTER_PORT=$(bash "$here/../tests/integration/master_port.sh") OMP_NUM_THREADS=1 \
  timeout 900 srun --mpi=none --kill-on-bad-exit=1 -N2 --ntasks-per-node=2 \
  bash "$here/../tests/integration/multinode/tcp_rank.sh" "$python" "$here/torch_allreduce_bench.py"
