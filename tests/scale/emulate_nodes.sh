#!/usr/bin/env bash
# Starts N ranks of a command on this machine as if on N/K nodes of K ranks (issue 29): each
# node's ranks run in UTS namespaces with a hostname of their own, which /etc/hosts resolves to a
# loopback address of its own (all of 127.0.0.0/8 is local), so libdtrain sees N/K hosts: its node
# layout, shared memory per host and hierarchy rules, all over loopback. Ranks get torchrun's
# variables (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK)
# and DTRAIN_BOOTSTRAP=tcp.
#
#   emulate_nodes.sh --ranks N --per-node K --out DIR [--timeout S] -- COMMAND [ARGS...]
#
# Each rank's output goes to DIR/rank-R.out and its exit status to DIR/rank-R.rc. Exits 0 when
# every rank exited 0, 1 otherwise, 124 when the ranks were still running after S seconds (default
# 600; they are killed). Needs root (unshare, /etc/hosts): its /etc/hosts lines carry a tag of
# this run and are removed when it ends, however it ends; no other line is touched.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ranks='' per_node='' out='' timeout=600
while (($#)); do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --per-node) per_node=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "emulate_nodes.sh: unknown argument '$1'; see the usage at the top of $0" >&2; exit 2 ;;
  esac
done
for v in ranks per_node timeout; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "emulate_nodes.sh: --${v/_/-} must be a positive integer, got '${!v}'" >&2; exit 2; }
done
[[ -n $out && $# -gt 0 ]] || { echo "emulate_nodes.sh: --out DIR and a command after -- are required" >&2; exit 2; }
((ranks % per_node == 0)) || { echo "emulate_nodes.sh: --ranks $ranks is not a multiple of --per-node $per_node" >&2; exit 2; }
((EUID == 0)) || { echo "emulate_nodes.sh: needs root (unshare --uts, /etc/hosts)" >&2; exit 2; }
nodes=$((ranks / per_node))
((nodes <= 60000)) || { echo "emulate_nodes.sh: at most 60000 nodes (one loopback address each)" >&2; exit 2; }
mkdir -p "$out"

tag="dtrain-emulated-$$"
prefix="em$$n"
# Every rank's descriptors and the store's connections: one rank per client at rank 0.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

remove_hosts() {
  # Rewrites /etc/hosts without this run's lines, under the same lock as the additions.
  (
    flock 9
    grep -v "#$tag\$" /etc/hosts >/etc/hosts.$tag || true
    cat /etc/hosts.$tag >/etc/hosts
    rm -f /etc/hosts.$tag
  ) 9>/run/dtrain-emulated-hosts.lock
}
pids=()
cleanup() {
  if ((${#pids[@]})); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  remove_hosts
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Node i answers at 127.77.x.y: x = i / 250, y = i % 250 + 1 (never .0, never .255).
{
  flock 9
  for ((i = 0; i < nodes; i++)); do
    echo "127.$((77 + i / 62500)).$((i / 250 % 250)).$((i % 250 + 1)) $prefix$i #$tag"
  done >>/etc/hosts
} 9>/run/dtrain-emulated-hosts.lock

export MASTER_ADDR=127.0.0.1
export MASTER_PORT=${MASTER_PORT:-$(bash "$here/../integration/master_port.sh")}
export WORLD_SIZE=$ranks LOCAL_WORLD_SIZE=$per_node DTRAIN_BOOTSTRAP=tcp
for ((r = 0; r < ranks; r++)); do
  node=$((r / per_node))
  RANK=$r LOCAL_RANK=$((r % per_node)) GROUP_RANK=$node \
    unshare --uts sh -c 'hostname "$0" && exec "$@"' "$prefix$node" "$@" \
    >"$out/rank-$r.out" 2>&1 </dev/null &
  pids+=($!)
done

# Wait for every rank, up to the timeout; record each exit status.
deadline=$((SECONDS + timeout))
failed=0
for ((r = 0; r < ranks; r++)); do
  pid=${pids[$r]}
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "emulate_nodes.sh: ranks still running after ${timeout} s; killing them" >&2
    exit 124
  fi
  rc=0
  wait "$pid" || rc=$?
  echo "$rc" >"$out/rank-$r.rc"
  ((rc == 0)) || failed=1
done
pids=()
exit "$failed"
