#!/usr/bin/env bash
# Is the cluster's emulated link honest (issue 21)? On a 3-node namespace cluster of its own, for
# each link rate: the one-way TCP rate from node 1 to node 2; both directions at once, over two
# connections (one each way) and over one carrying both (as Open MPI's TCP transport does); and
# nodes 2 and 3 sending to node 1 while it sends to node 2. Each stream is measured where it
# arrives. An honest full-duplex link gives each direction >= 0.9 x the one-way rate, and two
# senders into one node no more than its rate. Reports only; never fails on a rate.
#   link_check.sh CLUSTER_SH LINK_CHECK DIR [SECONDS] [RATE...]     (default: 5 s; 1gbit 400mbit)
# The cluster is DTRAIN_CLUSTER_INDEX (default 21, so it runs beside the ctest fixture's), in DIR,
# and goes down at the end. LINK_CHECK_CC=reno (say) sets the nodes' TCP congestion control.
# LINK_CHECK_MPI=PROBE (tests/integration/cluster/sendrecv_probe) adds Open MPI's rates between
# nodes 1 and 2, one way and MPI_Sendrecv both ways, with its default TCP transport and with two
# sockets per peer.
set -euo pipefail
cluster_sh=$1 link_check=$2 dir=$3 seconds=${4:-5}
shift $(($# < 4 ? $# : 4))
rates=("$@")
((${#rates[@]} > 0)) || rates=(1gbit 400mbit)
export DTRAIN_CLUSTER_INDEX=${DTRAIN_CLUSTER_INDEX:-21}
readonly warmup=1 port=5201
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT
bash "$cluster_sh" up "$dir" --nodes 3 --cpus 2 >/dev/null
subnet=10.231.$DTRAIN_CLUSTER_INDEX
out=$(mktemp -d)
trap 'rm -rf "$out"; bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT

on() { bash "$cluster_sh" exec "$dir" "$@"; }
if [[ -n ${LINK_CHECK_CC:-} ]]; then
  for k in 1 2 3; do on $k sysctl -q -w net.ipv4.tcp_congestion_control="$LINK_CHECK_CC"; done
fi
rate_of() { awk '{print $1}' "$1"; }
# Waits for every job; the receivers print the rates.
run_all() {
  local pid
  for pid; do wait "$pid" || { echo "link_check: a measurement failed" >&2; exit 1; }; done
}

one_way() {
  on 2 "$link_check" listen $port recv "$seconds" $warmup >"$out/one" & local r=$!
  sleep 0.3
  on 1 "$link_check" connect "$subnet.2" $port send & local s=$!
  run_all $r $s
}

two_connections() {
  on 2 "$link_check" listen $((port + 1)) recv "$seconds" $warmup >"$out/two12" & local r1=$!
  on 1 "$link_check" listen $((port + 2)) recv "$seconds" $warmup >"$out/two21" & local r2=$!
  sleep 0.3
  on 1 "$link_check" connect "$subnet.2" $((port + 1)) send & local s1=$!
  on 2 "$link_check" connect "$subnet.1" $((port + 2)) send & local s2=$!
  run_all $r1 $r2 $s1 $s2
}

one_connection() {
  on 2 "$link_check" listen $((port + 3)) send recv "$seconds" $warmup >"$out/one12" & local a=$!
  sleep 0.3
  on 1 "$link_check" connect "$subnet.2" $((port + 3)) send recv "$seconds" $warmup \
    >"$out/one21" & local b=$!
  run_all $a $b
}

# Nodes 2 and 3 send to node 1 while node 1 sends to node 2: node 1's receiving side is full (the
# two senders share it) and the acknowledgements of node 1's own stream must get through it.
fan_in() {
  on 1 "$link_check" listen $((port + 4)) recv "$seconds" $warmup >"$out/fan21" & local r1=$!
  on 1 "$link_check" listen $((port + 5)) recv "$seconds" $warmup >"$out/fan31" & local r2=$!
  on 2 "$link_check" listen $((port + 6)) recv "$seconds" $warmup >"$out/fan12" & local r3=$!
  sleep 0.3
  on 2 "$link_check" connect "$subnet.1" $((port + 4)) send & local s1=$!
  on 3 "$link_check" connect "$subnet.1" $((port + 5)) send & local s2=$!
  on 1 "$link_check" connect "$subnet.2" $((port + 6)) send & local s3=$!
  run_all $r1 $r2 $r3 $s1 $s2 $s3
}

# a over b, two decimals.
over() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN{print a < b ? a : b}'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.4f", a + b}'; }

echo "# link_check: 3 nodes ($subnet.1-3), TCP ($(on 1 sysctl -n net.ipv4.tcp_congestion_control)), $seconds s per measurement after ${warmup} s, GB/s = 1e9 B/s, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# both ways at once, over 2 connections and over 1: each direction, and the slower one / one-way (honest: >= 0.90)"
echo "# fan-in: 2->1 and 3->1 together (sum / one-way; honest: <= 1.05) while 1->2 runs (/ one-way; honest: >= 0.90)"
row() { printf '%-9s %-7s  %-7s %-7s %-5s  %-7s %-7s %-5s  %-7s %-5s %-7s %s\n' "$@"; }
row "# rate" one-way 2conn "" "" 1conn "" "" fan-in "" "" ""
row "#" "1->2" "1->2" "2->1" ratio "1->2" "2->1" ratio "2+3->1" ratio "1->2" ratio
for rate in "${rates[@]}"; do
  bash "$cluster_sh" shape "$dir" "$rate" 2>/dev/null
  one_way
  two_connections
  one_connection
  fan_in
  o=$(rate_of "$out/one")
  a=$(rate_of "$out/two12") b=$(rate_of "$out/two21")
  c=$(rate_of "$out/one12") d=$(rate_of "$out/one21")
  f=$(sum "$(rate_of "$out/fan21")" "$(rate_of "$out/fan31")") g=$(rate_of "$out/fan12")
  row "$rate" "$o" "$a" "$b" "$(over "$(min "$a" "$b")" "$o")" "$c" "$d" \
    "$(over "$(min "$c" "$d")" "$o")" "$f" "$(over "$f" "$o")" "$g" "$(over "$g" "$o")"
done

[[ -n ${LINK_CHECK_MPI:-} ]] || exit 0
# 64 MiB messages, 3 of them each way; Open MPI from the cluster's env.sh, through srun.
mpi() {
  (
    # shellcheck source=/dev/null # written by cluster.sh up
    source "$dir/env.sh"
    env "$@" timeout 300 srun --mpi=pmix -N2 -w "$NODE1,$NODE2" --ntasks-per-node=1 \
      "$LINK_CHECK_MPI" 67108864 3
  )
}
# shellcheck source=/dev/null
read -r NODE1 NODE2 _ <<<"$(source "$dir/env.sh" && echo "$DTRAIN_CLUSTER_NODES")"
echo "# Open MPI, nodes 1 and 2, one rank each, 64 MiB x 3: one-way, then MPI_Sendrecv each way"
mrow() { printf '%-9s %-7s  %-8s %-5s  %-8s %s\n' "$@"; }
mrow "# rate" one-way sendrecv ratio "2 links:" ""
mrow "#" "" default "" sendrecv ratio
for rate in "${rates[@]}"; do
  bash "$cluster_sh" shape "$dir" "$rate" 2>/dev/null
  read -r o d <<<"$(mpi OMPI_MCA_btl_tcp_links=1)"
  read -r _ l <<<"$(mpi OMPI_MCA_btl_tcp_links=2)"
  mrow "$rate" "$o" "$d" "$(over "$d" "$o")" "$l" "$(over "$l" "$o")"
done
