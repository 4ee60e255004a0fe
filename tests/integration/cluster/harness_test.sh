#!/usr/bin/env bash
# The cluster harness itself, beside the fixture's cluster: a second 2-node cluster
# (DTRAIN_CLUSTER_INDEX=1: its own subnet, bridge, namespaces, hostnames and ports) comes up, runs
# a 2-node step with a job left running, shapes each direction of its links, and goes down leaving
# no namespace, bridge, /etc/hosts line, daemon or task; the fixture's cluster keeps working.
#   harness_test.sh CLUSTER_SH DIR
set -euo pipefail
cluster_sh=$1 dir=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
export DTRAIN_CLUSTER_INDEX=1
trap 'bash "$cluster_sh" down "$dir" >/dev/null 2>&1 || true' EXIT

bash "$cluster_sh" up "$dir" --nodes 2 --cpus 2 --link-rate 200mbit
(
  source "$dir/env.sh"
  out=$(timeout 60 srun -N2 --ntasks-per-node=1 -l sh -c 'echo $(hostname) $(ip -4 -o addr show ens3 | awk "{print \$4}")' | sort)
  [[ $out == $'0: c1n1 10.231.1.1/24\n1: c1n2 10.231.1.2/24' ]] || fail "2-node step: got [$out]"
  echo "ok: srun -N2 runs on c1n1 and c1n2, each with its own address"
  timeout 10 sbatch -N2 --wrap 'srun sleep 300' >/dev/null
)
[[ $(bash "$cluster_sh" exec "$dir" 2 hostname) == c1n2 ]] || fail "exec on node 2"
# Each direction of c1n1's link on its own device: its ens3 (sending), the bridge's end (receiving).
send_side=(ip netns exec dtr1-n1 tc class show dev ens3) receive_side=(tc class show dev dtr1v1)
# Read whole first: grep -q stops reading at its match, and tc's SIGPIPE then fails the pipeline.
sent=$("${send_side[@]}") received=$("${receive_side[@]}")
grep -q 'class htb 1:1 .*rate 200Mbit' <<<"$sent" || fail "c1n1 sends unshaped: $sent"
grep -q 'class htb 1:1 .*rate 200Mbit' <<<"$received" || fail "c1n1 receives unshaped: $received"
bash "$cluster_sh" shape "$dir" off
[[ -z $("${send_side[@]}") && -z $("${receive_side[@]}") ]] || fail "shape off left a shaper"
echo "ok: exec and shape"

# The fixture's cluster is untouched by the second one.
(
  source "$(dirname "$dir")/multinode-cluster/env.sh"
  [[ $(timeout 60 srun -N2 --ntasks-per-node=1 hostname | sort | tr '\n' ' ') == "node1 node2 " ]] ||
    fail "the fixture's cluster stopped answering"
)
echo "ok: the fixture's cluster still runs its steps"

pids=$(cat "$dir"/run/*.pid)
bash "$cluster_sh" down "$dir"
trap - EXIT
[[ -z $(ip netns list | grep -E '^dtr1-n[0-9]') ]] || fail "namespaces left: $(ip netns list)"
! ip link show dtrbr1 >/dev/null 2>&1 || fail "bridge dtrbr1 left"
! grep -qF "dtrain-cluster:$dir" /etc/hosts || fail "/etc/hosts lines left"
for p in $pids; do
  if [[ -r /proc/$p/stat ]] && [[ $(awk '{print $3}' "/proc/$p/stat") != Z ]]; then
    fail "daemon $p still running"
  fi
done
if pgrep -f "sleep 300" >/dev/null && grep -qs "SLURM_CONF=$dir" /proc/$(pgrep -f 'sleep 300' | head -1)/environ; then
  fail "the job's task survived down"
fi
grep -q ' node1 ' /etc/hosts || fail "the fixture's /etc/hosts lines went too"
echo "ok: down left no namespace, bridge, hosts line or process; PASS"
