#!/usr/bin/env bash
# A real multi-node Slurm cluster on one machine, for dtrain's multi-node tests. Each node is a
# Linux network namespace (its own interface ens3 and address on a bridge) plus a UTS namespace (its own
# hostname) running its own slurmd; slurmctld runs on the bridge's address under its own hostname;
# one private munged serves all. Every srun/sbatch/mpirun task therefore sees the hostname, the
# address and the PMIx locality of the node it runs on, and Open MPI uses TCP between nodes and
# shared memory inside a node, as on a real cluster. The mount and PID namespaces are the host's:
# /tmp and /dev/shm are shared by all nodes, pids are unique across them.
#
#   cluster.sh up DIR [--nodes N] [--cpus N] [--gpus N] [--link-rate RATE]
#                     [--plugin SPANK_SO [--plugin-arg KEY=VALUE]...]
#   cluster.sh down DIR            undo exactly what up made (jobs, daemons, namespaces, bridge,
#                                  /etc/hosts lines), also after a failed or half-finished up
#   cluster.sh status DIR          exit 0 when every node is up and answering
#   cluster.sh exec DIR K CMD...   run CMD "on" node K outside Slurm (its network and hostname)
#   cluster.sh shape DIR RATE|off  change every node's link rate, each direction on its own
#                                  (sending: its interface's egress; receiving: the bridge side's)
#   cluster.sh lose-node DIR K     a node failure: SIGKILL node K's slurmd and every process in its
#                                  namespace (job steps and tasks), as a crashed machine would
#   cluster.sh revive-node DIR K   start node K's slurmd again (the node rejoins, idle)
#
# DIR holds etc/ (slurm.conf, gres.conf, plugstack.conf), state/, spool/, log/, run/ (pid files,
# munge socket and key), dev/ (fake GPUs), tmp/<node>/ (each node's TmpFS) and env.sh, which
# callers source: it exports SLURM_CONF and the Open MPI settings for the cluster's network.
#
# Names: nodes node1..nodeN at 10.231.0.K/24, bridge dtrbr0 (10.231.0.254, the controller
# "dtrhead"), namespaces dtr-node1..N. DTRAIN_CLUSTER_INDEX=I (1-99) makes a second cluster that
# can run beside the first: subnet 10.231.I, bridge dtrbrI, nodes cIn1.., namespaces dtrI-n1...
# Needs root (namespaces, mknod, /etc/hosts).
set -euo pipefail

readonly SBIN=/usr/sbin
readonly SPANK_PBS=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_pbs.so
readonly CLIENT_TIMEOUT=10
# Each node's network interface. Not eth0: the host's own interface is called that here, and
# hwloc (which reads the host's /sys inside a network namespace) would name it, so only code that
# checks what the node really has picks this one.
readonly IFNAME=ens3

# shellcheck source=processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/processes.sh"
usage() {
  sed -n '/^#   cluster.sh/,/^#$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# --- names ----------------------------------------------------------------------------------------

# Sets the names of cluster index $1 (0 = the default cluster).
set_names() {
  local i=$1
  [[ $i =~ ^([0-9]|[1-9][0-9])$ ]] || die "DTRAIN_CLUSTER_INDEX: expected 0-99, got '$i'"
  INDEX=$i
  SUBNET=10.231.$i
  BRIDGE=dtrbr$i
  if ((i == 0)); then
    NODE_PREFIX=node NETNS_PREFIX=dtr-node VETH_PREFIX=dtrv HEAD_NAME=dtrhead
  else
    NODE_PREFIX=c${i}n NETNS_PREFIX=dtr$i-n VETH_PREFIX=dtr${i}v HEAD_NAME=dtrhead$i
  fi
  CTLD_PORT=$((18000 + 2 * i))
  SLURMD_PORT=$((CTLD_PORT + 1))
}

# Reads the names and node count that `up` recorded in DIR/run/names (so down undoes what up made,
# whatever the caller's environment says now). Returns 1 when there is no record.
load_names() {
  local dir=$1
  [[ -r $dir/run/names ]] || return 1
  local index nodes
  read -r index nodes <"$dir/run/names" || return 1
  set_names "$index"
  NODES=$nodes
}

hosts_tag() { echo "# dtrain-cluster:$1"; }

# --- processes ------------------------------------------------------------------------------------

# The pids of every process in node K's network namespace: its slurmd, step daemons and tasks.
# Only processes we started can be there (the namespace is ours).
pids_on_node() {
  local ns=/run/netns/$NETNS_PREFIX$1
  [[ -e $ns ]] || return 0
  ip netns pids "$NETNS_PREFIX$1" 2>/dev/null || true
}

# --- down -----------------------------------------------------------------------------------------

cmd_down() {
  local dir=$1
  if ! load_names "$dir"; then
    log "no cluster recorded in $dir: nothing to stop"
    return 0
  fi
  export SLURM_CONF=$dir/etc/slurm.conf
  local k jobs
  # Jobs first, so that slurmstepd ends its tasks the ordinary way.
  if live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null && [[ -r $SLURM_CONF ]]; then
    jobs=$(timeout "$CLIENT_TIMEOUT" squeue -h -o %A 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      log "cancelling jobs left in the queue: $(echo "$jobs" | tr '\n' ' ')"
      # shellcheck disable=SC2086 # one job id per word
      timeout "$CLIENT_TIMEOUT" scancel --full $jobs 2>/dev/null || true
      local i
      for ((i = 0; i < 50; i++)); do
        [[ -z $(timeout "$CLIENT_TIMEOUT" squeue -h -t R,CG -o %A 2>/dev/null || true) ]] && break
        sleep 0.1
      done
    fi
  fi
  # The daemons, by pid file, all at once; munged last would gain nothing.
  local -a pids=()
  local pid
  for ((k = 1; k <= NODES; k++)); do
    if pid=$(live_pid "$dir/run/slurmd-$NODE_PREFIX$k.pid" slurmd); then pids+=("$pid"); fi
  done
  if pid=$(live_pid "$dir/run/slurmctld.pid" slurmctld); then pids+=("$pid"); fi
  if pid=$(live_pid "$dir/run/munged.pid" munged); then pids+=("$pid"); fi
  terminate 10 "${pids[@]}"
  # Whatever still runs inside our namespaces (steps of a cancelled job, an orphaned task):
  # slurmstepd ignores SIGTERM, so SIGKILL.
  pids=()
  for ((k = 1; k <= NODES; k++)); do
    mapfile -t -O "${#pids[@]}" pids < <(pids_on_node "$k")
  done
  if ((${#pids[@]} > 0)); then
    log "killing processes left in the nodes: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  # Deleting a namespace deletes its end of the veth pair, and with it our end.
  for ((k = 1; k <= NODES; k++)); do
    if [[ -e /run/netns/$NETNS_PREFIX$k ]]; then ip netns del "$NETNS_PREFIX$k" || true; fi
    if ip link show "$VETH_PREFIX$k" >/dev/null 2>&1; then ip link del "$VETH_PREFIX$k" || true; fi
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE" || true; fi
  remove_hosts_lines "$dir"
  rm -f "$dir/run/names" "$dir"/run/*.pid "$dir/env.sh"
  log "down: $dir"
}

# /etc/hosts is rewritten in place (cat >, not mv): it can be a bind mount.
remove_hosts_lines() {
  local tag
  tag=$(hosts_tag "$1")
  if grep -qF -- "$tag" /etc/hosts; then
    local kept
    kept=$(grep -vF -- "$tag" /etc/hosts || true)
    printf '%s\n' "$kept" >/etc/hosts
  fi
}

# --- status ---------------------------------------------------------------------------------------

cmd_status() {
  local dir=$1 states
  load_names "$dir" || return 1
  export SLURM_CONF=$dir/etc/slurm.conf
  timeout "$CLIENT_TIMEOUT" scontrol ping 2>/dev/null | grep -q 'is UP' || return 1
  states=$(timeout "$CLIENT_TIMEOUT" sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
  [[ $(grep -cE ' (idle|mixed|allocated|completing)$' <<<"$states") -ge $NODES ]]
}

# --- up -------------------------------------------------------------------------------------------

# Node K's link at RATE, each direction on its own device, as a full-duplex NIC and its switch port:
# what node K sends leaves through its $IFNAME's egress, what it receives through the egress of the
# bridge's end of its veth pair (so two nodes sending to it share its rate, as on a real switch
# port). "off" removes both.
shape_node() {
  local k=$1 rate=$2 bps=0
  if [[ $rate != off ]]; then
    [[ $rate =~ ^([0-9]+)(kbit|mbit|gbit)$ ]] ||
      die "link rate: expected a number with kbit, mbit or gbit (e.g. 1gbit), got '$rate'"
    case ${BASH_REMATCH[2]} in
      kbit) bps=$((BASH_REMATCH[1] * 1000)) ;;
      mbit) bps=$((BASH_REMATCH[1] * 1000000)) ;;
      gbit) bps=$((BASH_REMATCH[1] * 1000000000)) ;;
    esac
  fi
  ip netns exec "$NETNS_PREFIX$k" tc qdisc del dev "$IFNAME" root 2>/dev/null || true
  tc qdisc del dev "$VETH_PREFIX$k" root 2>/dev/null || true
  [[ $rate == off ]] && return 0
  shape_egress "ip netns exec $NETNS_PREFIX$k" "$IFNAME" "$rate" "$bps"
  shape_egress "" "$VETH_PREFIX$k" "$rate" "$bps"
}

# One direction: DEV's egress at RATE (tc run through the command prefix NS, "" for the root
# namespace). One FIFO would hold a stream's acknowledgements behind up to 50 ms of the bulk data
# of streams the other way, and starve them (measured: 0.62 of the rate, bench/link_check.sh); a
# switch port does not queue like that. So an HTB at RATE with two classes that may each take all
# of it: packets under 128 bytes (pure TCP ACKs, SYNs, small control messages) go first, and bulk
# data waits in a byte FIFO of 50 ms of the rate plus the burst (tbf's queue before). This kernel
# has no prio, sfq, fq or fq_codel. The burst is 1 ms of the rate but at least 256 KiB, as a
# 64 KiB GSO packet needs.
shape_egress() {
  local ns=$1 dev=$2 rate=$3 bps=$4 burst
  burst=$((bps / 8 / 1000))
  ((burst >= 262144)) || burst=262144
  local -a c=(burst "$burst" cburst "$burst" quantum 65536)
  # shellcheck disable=SC2086 # the prefix is words
  {
    $ns tc qdisc add dev "$dev" root handle 1: htb default 20
    $ns tc class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" "${c[@]}"
    $ns tc class add dev "$dev" parent 1:1 classid 1:10 htb rate $((bps / 10))bit ceil "$rate" \
      prio 0 "${c[@]}"
    $ns tc class add dev "$dev" parent 1:1 classid 1:20 htb rate $((bps - bps / 10))bit \
      ceil "$rate" prio 1 "${c[@]}"
    $ns tc qdisc add dev "$dev" parent 1:20 bfifo limit $((bps / 8 / 20 + burst))
    # IPv4 total length under 128 (the mask keeps its top nine bits).
    $ns tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match u16 0 0xff80 at 2 \
      flowid 1:10
  }
}

UP_DIR=""
on_exit() {
  local rc=$?
  if ((rc != 0)) && [[ -n $UP_DIR ]]; then
    log "error: the cluster in $UP_DIR did not come up; daemon logs follow"
    local f
    for f in "$UP_DIR"/log/*; do
      [[ -s $f ]] || continue
      echo "----- $f (last 20 lines) -----" >&2
      tail -n 20 "$f" >&2 || true
    done
    cmd_down "$UP_DIR" || true
  fi
  return "$rc"
}

cmd_up() {
  local dir=$1
  shift
  local nodes=2 cpus=8 gpus=0 rate="" plugin=""
  local -a plugin_args=()
  while (($# > 0)); do
    (($# >= 2)) || usage
    case $1 in
      --nodes) nodes=$2 ;;
      --cpus) cpus=$2 ;;
      --gpus) gpus=$2 ;;
      --link-rate) rate=$2 ;;
      --plugin) plugin=$2 ;;
      --plugin-arg)
        [[ $2 =~ ^[A-Za-z_]+=[^[:space:]]*$ ]] || die "--plugin-arg: expected KEY=VALUE, got '$2'"
        plugin_args+=("$2")
        ;;
      *) usage ;;
    esac
    shift 2
  done
  [[ $nodes =~ ^[1-9][0-9]?$ ]] || die "--nodes: expected 1-99, got '$nodes'"
  [[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus: expected a positive integer, got '$cpus'"
  [[ $gpus =~ ^[0-9]+$ ]] || die "--gpus: expected a non-negative integer, got '$gpus'"
  if [[ -n $plugin ]]; then
    [[ -f $plugin ]] || die "--plugin: $plugin does not exist"
    plugin=$(realpath "$plugin")
  fi
  (($(id -u) == 0)) || die "must run as root (network namespaces, mknod, /etc/hosts)"
  local tool
  for tool in "$SBIN/slurmctld" "$SBIN/slurmd" "$SBIN/munged" scontrol sinfo ip tc nsenter unshare; do
    command -v "$tool" >/dev/null || die "$tool not found: run scripts/install-deps"
  done

  # A cluster recorded in DIR goes first, whatever its names were.
  cmd_down "$dir"
  set_names "${DTRAIN_CLUSTER_INDEX:-0}"
  NODES=$nodes
  local k
  ! ip link show "$BRIDGE" >/dev/null 2>&1 ||
    die "bridge $BRIDGE exists but is not recorded in $dir: another cluster (or another DIR) owns it; stop that one, or choose DTRAIN_CLUSTER_INDEX"
  for ((k = 1; k <= nodes; k++)); do
    [[ ! -e /run/netns/$NETNS_PREFIX$k ]] ||
      die "network namespace $NETNS_PREFIX$k exists but is not recorded in $dir: not ours"
  done
  if (exec 3<>"/dev/tcp/127.0.0.1/$CTLD_PORT") 2>/dev/null; then
    die "port $CTLD_PORT (SlurmctldPort) is in use; choose DTRAIN_CLUSTER_INDEX"
  fi

  rm -rf "${dir:?}"/{etc,state,spool,log,run,dev,tmp}
  mkdir -p "$dir"/{etc,state,spool,log,run,dev}
  chmod 755 "$dir/run"
  # Recorded before anything is made, so that down can undo a half-finished up.
  echo "$INDEX $nodes" >"$dir/run/names"
  UP_DIR=$dir
  trap on_exit EXIT
  unset_foreign_slurm_env

  # The network: a bridge, and per node a namespace whose end of a veth pair is its $IFNAME.
  ip link add "$BRIDGE" type bridge
  ip addr add "$SUBNET.254/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((k = 1; k <= nodes; k++)); do
    ip netns add "$NETNS_PREFIX$k"
    ip link add "$VETH_PREFIX$k" type veth peer name "$IFNAME" netns "$NETNS_PREFIX$k"
    ip link set "$VETH_PREFIX$k" master "$BRIDGE" up
    ip -n "$NETNS_PREFIX$k" link set lo up
    ip -n "$NETNS_PREFIX$k" addr add "$SUBNET.$k/24" dev "$IFNAME"
    ip -n "$NETNS_PREFIX$k" link set "$IFNAME" up
    if [[ -n $rate ]]; then shape_node "$k" "$rate"; fi
  done
  local tag hosts
  tag=$(hosts_tag "$dir")
  hosts=$(grep -vF -- "$tag" /etc/hosts || true)
  {
    printf '%s\n' "$hosts"
    echo "$SUBNET.254 $HEAD_NAME $tag"
    for ((k = 1; k <= nodes; k++)); do echo "$SUBNET.$k $NODE_PREFIX$k $tag"; done
  } >"$dir/run/hosts"
  cat "$dir/run/hosts" >/etc/hosts

  write_config "$dir" "$nodes" "$cpus" "$gpus" "$plugin" "${plugin_args[@]}"
  export SLURM_CONF=$dir/etc/slurm.conf

  # Private munge: its own key copy and socket, so no system munged is needed or disturbed.
  local key=$dir/run/munge.key socket=$dir/run/munge.socket
  if [[ -r /etc/munge/munge.key ]]; then
    install -m 600 /etc/munge/munge.key "$key"
  else
    mungekey --create --keyfile="$key" 2>>"$dir/log/munged.stdout"
  fi
  "$SBIN/munged" --force --socket="$socket" --key-file="$key" --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/run/munged.seed" \
    </dev/null >>"$dir/log/munged.stdout" 2>&1 || die "munged failed to start"
  munge --socket="$socket" -n </dev/null | unmunge --socket="$socket" >/dev/null ||
    die "munge on $socket does not work"

  # slurmctld must find its own hostname in SlurmctldHost, so it gets a UTS namespace named so.
  # Each slurmd enters its node's network namespace with nsenter, not `ip netns exec`: that also
  # remounts /sys, which hides the cgroup mounts slurmd needs.
  unshare --uts sh -c "hostname $HEAD_NAME && exec $SBIN/slurmctld -f $SLURM_CONF" \
    </dev/null >>"$dir/log/slurmctld.stdout" 2>&1 || die "slurmctld failed to start"
  for ((k = 1; k <= nodes; k++)); do
    start_slurmd "$dir" "$k"
  done

  local deadline=$((SECONDS + ${DTRAIN_CLUSTER_START_TIMEOUT:-60})) up=0
  until ((up >= nodes)); do
    ((SECONDS < deadline)) || die "only $up of $nodes nodes became idle"
    sleep 0.2
    up=$(timeout "$CLIENT_TIMEOUT" sinfo -h -N -o %T 2>/dev/null | grep -c '^idle$' || true)
  done
  write_env "$dir"
  UP_DIR=""
  log "up: $dir: $nodes nodes (${NODE_PREFIX}1-$nodes on $SUBNET.0/24), $cpus CPUs and $gpus GPUs each${rate:+, links at $rate}${plugin:+, plugin $plugin}"
}

start_slurmd() {
  local dir=$1 k=$2
  nsenter --net="/run/netns/$NETNS_PREFIX$k" unshare --uts \
    sh -c "hostname $NODE_PREFIX$k && exec $SBIN/slurmd -f $SLURM_CONF -N $NODE_PREFIX$k" \
    </dev/null >>"$dir/log/slurmd-$NODE_PREFIX$k.stdout" 2>&1 ||
    die "slurmd of $NODE_PREFIX$k failed to start"
}

write_config() {
  local dir=$1 nodes=$2 cpus=$3 gpus=$4 plugin=$5
  shift 5
  local k gres_types="" gres=""
  for ((k = 1; k <= nodes; k++)); do mkdir -p "$dir/tmp/$NODE_PREFIX$k"; done
  {
    echo "AutoDetect=off"
    if ((gpus > 0)); then
      # Character devices, as gres/gpu demands; one set serves every node (the mount namespace is
      # shared), as /dev/nvidia0.. exist on every real node. Nothing ever opens them.
      local i
      for ((i = 0; i < gpus; i++)); do mknod "$dir/dev/nvidia$i" c 195 "$i"; done
      echo "NodeName=$NODE_PREFIX[1-$nodes] Name=gpu File=$dir/dev/nvidia[0-$((gpus - 1))]"
      gres_types=GresTypes=gpu
      gres="Gres=gpu:$gpus"
    fi
  } >"$dir/etc/gres.conf"
  cat >"$dir/etc/slurm.conf" <<CONF
# Written by tests/integration/cluster/cluster.sh up; rewritten at every up.
ClusterName=dtrainmn$INDEX
SlurmctldHost=$HEAD_NAME($SUBNET.254)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/run/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# Each node's "local disk": the PMIx plugin makes the same per-step directory on every node, and
# one shared /tmp would make the second node fail with "File exists".
TmpFS=$dir/tmp/%n
# Job ids of two clusters on one machine differ (MPI session directories are named by them).
FirstJobId=$((INDEX * 100000 + 50001))
# More CPUs than the machine has: task/affinity could not lay the tasks out.
$(slurm_conf_common "$dir" task/none)
# A lost node is noticed in seconds, not the default 5 minutes.
SlurmdTimeout=10
$gres_types
CONF
  for ((k = 1; k <= nodes; k++)); do
    echo "NodeName=$NODE_PREFIX$k NodeAddr=$SUBNET.$k NodeHostname=$NODE_PREFIX$k CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=4000 $gres State=UNKNOWN"
  done >>"$dir/etc/slurm.conf"
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$dir/etc/slurm.conf"
  {
    if [[ -n $plugin ]]; then echo "required $plugin${*:+ $*}"; fi
    # PBS_* variables in jobs, for the Torque qsub tests.
    if [[ -f $SPANK_PBS ]]; then echo "optional $SPANK_PBS"; fi
  } >"$dir/etc/plugstack.conf"
}

write_env() {
  local dir=$1
  cat >"$dir/env.sh" <<ENV
# Source this to use the multi-node cluster in $dir (written by cluster.sh up).
if [ "\${SLURM_CONF:-}" != "$dir/etc/slurm.conf" ]; then
  for _dtrain_v in \$(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "\$_dtrain_v"; done
  unset _dtrain_v
fi
export SLURM_CONF="$dir/etc/slurm.conf"
export DTRAIN_CLUSTER_DIR="$dir"
export DTRAIN_CLUSTER_NODES="$(for ((k = 1; k <= NODES; k++)); do printf '%s ' "$NODE_PREFIX$k"; done | sed 's/ $//')"
# Jobs run as root; mpirun refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI between nodes over the cluster's network only (never lo or the host's own interface).
export OMPI_MCA_btl_tcp_if_include=$SUBNET.0/24
export OMPI_MCA_oob_tcp_if_include=$SUBNET.0/24
# All nodes share this machine's cores: ranks that busy-poll would starve each other.
export OMPI_MCA_mpi_yield_when_idle=1
ENV
}

# --- exec, shape, lose-node -----------------------------------------------------------------------

node_index() {
  [[ $1 =~ ^[1-9][0-9]?$ ]] && (($1 <= NODES)) || die "node: expected 1-$NODES, got '$1'"
}

cmd_exec() {
  local dir=$1 k=$2
  shift 2
  load_names "$dir" || die "no cluster in $dir"
  node_index "$k"
  (($# > 0)) || usage
  exec nsenter --net="/run/netns/$NETNS_PREFIX$k" unshare --uts \
    sh -c 'hostname "$0" && exec "$@"' "$NODE_PREFIX$k" "$@"
}

cmd_shape() {
  local dir=$1 rate=$2 k
  load_names "$dir" || die "no cluster in $dir"
  for ((k = 1; k <= NODES; k++)); do shape_node "$k" "$rate"; done
  log "links of $NODES nodes: $rate"
}

cmd_lose_node() {
  local dir=$1 k=$2
  load_names "$dir" || die "no cluster in $dir"
  node_index "$k"
  local -a pids
  mapfile -t pids < <(pids_on_node "$k")
  if ((${#pids[@]} > 0)); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  log "lost $NODE_PREFIX$k: killed ${#pids[@]} processes (its slurmd, steps and tasks)"
}

cmd_revive_node() {
  local dir=$1 k=$2 i state
  load_names "$dir" || die "no cluster in $dir"
  node_index "$k"
  export SLURM_CONF=$dir/etc/slurm.conf
  if ! live_pid "$dir/run/slurmd-$NODE_PREFIX$k.pid" slurmd >/dev/null; then start_slurmd "$dir" "$k"; fi
  for ((i = 0; i < 300; i++)); do
    state=$(timeout "$CLIENT_TIMEOUT" sinfo -h -N -n "$NODE_PREFIX$k" -o %T 2>/dev/null | head -1)
    [[ $state == idle ]] && break
    # A node Slurm marked down for not responding comes back by itself (ReturnToService=2) once
    # its slurmd registers; one drained by a failure needs telling.
    if [[ $state == *drain* || $state == down* ]] && ((i % 25 == 24)); then
      timeout "$CLIENT_TIMEOUT" scontrol update nodename="$NODE_PREFIX$k" state=resume 2>/dev/null || true
    fi
    sleep 0.2
  done
  [[ $state == idle ]] || die "$NODE_PREFIX$k did not come back (state: '${state:-none}')"
  log "revived $NODE_PREFIX$k"
}

main() {
  (($# >= 2)) || usage
  local cmd=$1 dir
  dir=$(realpath -m "$2")
  shift 2
  [[ $dir != / ]] || die "DIR must not be /"
  case $cmd in
    up) cmd_up "$dir" "$@" ;;
    down) (($# == 0)) || usage && cmd_down "$dir" ;;
    status) (($# == 0)) || usage && cmd_status "$dir" ;;
    exec) (($# >= 2)) || usage && cmd_exec "$dir" "$@" ;;
    shape) (($# == 1)) || usage && cmd_shape "$dir" "$1" ;;
    lose-node) (($# == 1)) || usage && cmd_lose_node "$dir" "$1" ;;
    revive-node) (($# == 1)) || usage && cmd_revive_node "$dir" "$1" ;;
    *) usage ;;
  esac
}

main "$@"
