#!/usr/bin/env bash
# The network interface per rank on each node. A node of the cluster has one interface, ens3 (its
# address on the cluster network), while hwloc, reading the host's /sys, reports the host's eth0:
# `dtrain topo`, `dtrain bind` and init() must each name the interface the node really has, and
# export NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and UCX_NET_DEVICES for it.
# Every step names node1 and node2 (-w): Slurm may otherwise place a step on node3 while the
# previous step's nodes are still completing, and the checks name each task's node.
#   nic_test.sh CLUSTER_DIR DTRAIN AFFINITY_PROBE
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 PROBE=$3
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT

echo "== dtrain topo on node1 and node2"
timeout 60 srun -N2 -w node1,node2 --ntasks-per-node=1 -l "$DTRAIN" topo >"$work/topo" 2>&1 ||
  fail "dtrain topo: $(cat "$work/topo")"
for t in 0 1; do
  nic=$(sed -n "s/^$t: \\(ens3\\|eth0\\) .*/&/p" "$work/topo")
  expect_match "$nic" "^$t: ens3 +ethernet " "task $t's NIC line of dtrain topo"
done
! grep -q '^[01]: eth0 ' "$work/topo" || fail "dtrain topo lists the host's eth0: $(cat "$work/topo")"
echo "ok: $(grep '^1: ens3' "$work/topo")"

echo "== dtrain bind on node1 and node2: the variables name the node's own interface"
timeout 60 srun -N2 -w node1,node2 --ntasks-per-node=2 -l "$DTRAIN" bind --gpu=none -- sh -c \
  'echo "IF=$NCCL_SOCKET_IFNAME GLOO=$GLOO_SOCKET_IFNAME UCX=$UCX_NET_DEVICES HOST=$(hostname) EXISTS=$(ip -o -4 addr show dev ${GLOO_SOCKET_IFNAME:-none} 2>/dev/null | awk "{print \$4}")"' \
  >"$work/bind" 2>&1 || fail "dtrain bind: $(cat "$work/bind")"
for t in 0 1 2 3; do
  expect_eq "$t: IF==ens3 GLOO=ens3 UCX=ens3 HOST=node$((t / 2 + 1)) EXISTS=10.231.0.$((t / 2 + 1))/24" \
    "$(grep "^$t: " "$work/bind")" "task $t"
done
echo "ok: 4 tasks on 2 nodes: NCCL/Gloo/UCX on ens3, which carries the node's address"

echo "== init() in a rank no launcher bound: it exports the same"
timeout 60 srun --mpi=pmix -N2 -w node1,node2 --ntasks-per-node=1 "$PROBE" >"$work/init" 2>&1 ||
  fail "affinity_probe: $(cat "$work/init")"
for r in 0 1; do
  line=$(grep -P "^affinity_probe\trank=$r\t" "$work/init") || fail "no line of rank $r: $(cat "$work/init")"
  expect_contains "$line" $'\tNCCL_SOCKET_IFNAME==ens3\tGLOO_SOCKET_IFNAME=ens3\thost=node'$((r + 1)) "rank $r after init()"
done
echo "ok: init() on node1 and node2 exported ens3"
echo PASS
