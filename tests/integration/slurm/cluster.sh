#!/usr/bin/env bash
# Starts and stops a private single-node Slurm cluster (munged + slurmctld + slurmd) on localhost,
# for dtrain's integration tests. Everything the cluster owns lives under one directory DIR:
#
#   DIR/etc/    slurm.conf, gres.conf, plugstack.conf
#   DIR/state/  slurmctld's StateSaveLocation (wiped at every start)
#   DIR/spool/  slurmd's spool (wiped at every start)
#   DIR/log/    slurmctld.log, slurmd.log, munged.log and the daemons' stdout/stderr
#   DIR/run/    pid files, the private munge key and socket
#   DIR/dev/    fake GPU character devices (--gpus)
#   DIR/tmp/    Slurm's TmpFS (the PMIx plugin's per-step directories)
#   DIR/env.sh  source it to talk to this cluster (exports SLURM_CONF)
#
# Usage:
#   cluster.sh start DIR [--plugin SPANK_SO [--plugin-arg KEY=VALUE]...] [--fake-cpus N] [--gpus N]
#   cluster.sh stop DIR
#   cluster.sh status DIR
#
# Environment:
#   DTRAIN_SLURM_PORT_BASE      SlurmctldPort; SlurmdPort is one above. Default: derived from DIR
#                               (17000..17998) so that clusters in different DIRs can run side by
#                               side and neither collides with a system Slurm (6817/6818).
#   DTRAIN_SLURM_START_TIMEOUT  seconds to wait for the cluster to come up (default 30).
#   DTRAIN_SLURM_MUNGE_SOCKET   use this already running munged instead of starting a private one
#                               (e.g. /run/munge/munge.socket.2).
#
# Needs root: slurmd runs job steps as their user and the fake GPUs are made with mknod.
set -euo pipefail

readonly SLURM_SBIN=/usr/sbin
readonly PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
# Each Slurm client command (scontrol, sinfo, squeue, scancel) gets this many seconds: a wedged
# daemon must never hang a test run.
readonly CLIENT_TIMEOUT=10

usage() {
  cat >&2 <<'EOF'
usage: cluster.sh start DIR [--plugin SPANK_SO [--plugin-arg KEY=VALUE]...] [--fake-cpus N] [--gpus N]
       cluster.sh stop DIR
       cluster.sh status DIR
EOF
  exit 2
}

# shellcheck source=../cluster/processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/processes.sh"

# --- processes ------------------------------------------------------------------------------------

# Prints the pids of our own daemons, found by the private paths on their command lines. This finds
# leftovers even when their pid files are gone (a build directory wiped while the cluster ran).
# Only these process names are considered, so no user process (an editor on slurm.conf) is hit.
pids_of_our_daemons() {
  local dir=$1 p comm args
  for p in /proc/[0-9]*; do
    read -r comm 2>/dev/null <"$p/comm" || continue
    case $comm in
      slurmctld | slurmd | slurmscriptd | munged) ;;
      *) continue ;;
    esac
    mapfile -d '' -t args 2>/dev/null <"$p/cmdline" || continue
    case " ${args[*]} " in
      *" $dir/etc/slurm.conf "* | *" --socket=$dir/run/munge.socket "*) echo "${p#/proc/}" ;;
    esac
  done
}

# Prints the pids of slurmstepd processes of this cluster and of the job tasks they started: both
# carry SLURM_CONF=DIR/etc/slurm.conf in their environment (slurmd passes its own on to the step
# daemon; tasks get the environment of the srun/sbatch that sourced env.sh) and the tasks also
# carry SLURM_JOB_ID. A shell that merely sourced env.sh has no SLURM_JOB_ID and is left alone.
pids_of_our_steps() {
  local dir=$1 p v comm env_vars is_ours is_job
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" || ${p#/proc/} == "$PPID" ]] && continue
    read -r comm 2>/dev/null <"$p/comm" || continue
    mapfile -d '' -t env_vars 2>/dev/null <"$p/environ" || continue
    is_ours=0 is_job=0
    for v in "${env_vars[@]}"; do
      [[ $v == "SLURM_CONF=$dir/etc/slurm.conf" ]] && is_ours=1
      [[ $v == SLURM_JOB_ID=* ]] && is_job=1
    done
    if ((is_ours)) && [[ $comm == slurmstepd ]] || ((is_ours && is_job)); then
      echo "${p#/proc/}"
    fi
  done
}

# SIGKILLs leftover step daemons and tasks of the cluster in $1; SIGKILL at once, because
# slurmstepd ignores SIGTERM.
kill_our_steps() {
  local -a steps
  mapfile -t steps < <(pids_of_our_steps "$1")
  if ((${#steps[@]} > 0)); then
    log "killing leftover job steps: ${steps[*]}"
    kill -KILL "${steps[@]}" 2>/dev/null || true
  fi
}

# --- stop -----------------------------------------------------------------------------------------

cmd_stop() {
  local dir=$1 jobs
  # No early return when DIR is gone: daemons of a cluster whose directory was deleted under them
  # are still found below by their command lines.
  export SLURM_CONF=$dir/etc/slurm.conf

  # Running jobs first: killing slurmd does not kill its step daemons or their tasks, and a job
  # left behind would outlive the test run. KillWait=5 bounds how long a task may ignore SIGTERM.
  if live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null && [[ -r $SLURM_CONF ]]; then
    jobs=$(timeout "$CLIENT_TIMEOUT" squeue -h -o %A 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      log "cancelling jobs left in the queue: $(echo "$jobs" | tr '\n' ' ')"
      # shellcheck disable=SC2086 # one job id per word
      timeout "$CLIENT_TIMEOUT" scancel $jobs 2>/dev/null || true
      local i
      for ((i = 0; i < 100; i++)); do
        [[ -z $(timeout "$CLIENT_TIMEOUT" squeue -h -t R,CG,S -o %A 2>/dev/null || true) ]] && break
        sleep 0.1
      done
    fi
  fi

  # Step daemons and tasks that outlived the scancel above (slurmctld was not answering, say),
  # before the daemons: slurmd takes ~9 s to exit while steps of a dead controller still run.
  kill_our_steps "$dir"

  # The daemons, by pid file and, for leftovers whose pid file is gone, by their command line.
  # All at once: each takes 1-2 s to exit on SIGTERM, and nothing is lost if munged goes first
  # (the state slurmctld saves on the way out is wiped by the next start anyway).
  local name pid
  local -a found=()
  for name in slurmd slurmctld munged; do
    if pid=$(live_pid "$dir/run/$name.pid" "$name"); then
      found+=("$pid")
    fi
  done
  mapfile -t -O "${#found[@]}" found < <(pids_of_our_daemons "$dir")
  mapfile -t found < <(printf '%s\n' "${found[@]}" | sed '/^$/d' | sort -u)
  terminate 10 "${found[@]}"
  # And any step slurmd launched meanwhile.
  kill_our_steps "$dir"

  rm -f "$dir/run/slurmctld.pid" "$dir/run/slurmd.pid" "$dir/run/munged.pid"
  return 0
}

# --- status ---------------------------------------------------------------------------------------

cmd_status() {
  local dir=$1 state
  export SLURM_CONF=$dir/etc/slurm.conf
  [[ -r $SLURM_CONF ]] || return 1
  live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null || return 1
  live_pid "$dir/run/slurmd.pid" slurmd >/dev/null || return 1
  timeout "$CLIENT_TIMEOUT" scontrol ping 2>/dev/null | grep -q 'is UP' || return 1
  state=$(timeout "$CLIENT_TIMEOUT" sinfo -h -N -o %T 2>/dev/null | head -1) || return 1
  [[ $state =~ ^(idle|mixed|allocated|completing)$ ]]
}

# --- start ----------------------------------------------------------------------------------------

# True if something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Splits N fake CPUs into sockets x cores x threads the way a real server would look: two hardware
# threads per core and two sockets where N allows, so binding code sees a non-trivial topology.
fake_topology() {
  local n=$1 threads=1 sockets=1 cores
  if ((n % 2 == 0)); then
    threads=2
  fi
  cores=$((n / threads))
  if ((cores % 2 == 0)); then
    sockets=2
  fi
  echo "$sockets $((cores / sockets)) $threads"
}

start_failed() {
  local dir=$1 f
  log "error: the Slurm cluster in $dir did not come up; daemon logs follow"
  for f in "$dir"/log/*; do
    [[ -f $f ]] || continue
    echo "----- $f (last 30 lines) -----" >&2
    tail -n 30 "$f" >&2 || true
  done
  if [[ -r $dir/etc/slurm.conf ]]; then
    echo "----- sinfo -----" >&2
    SLURM_CONF=$dir/etc/slurm.conf timeout "$CLIENT_TIMEOUT" \
      sinfo -N -o '%N %T %c %z %G %E' >&2 || true
  fi
  cmd_stop "$dir" || true
}

STARTING_DIR=""
on_exit() {
  local rc=$?
  if ((rc != 0)) && [[ -n $STARTING_DIR ]]; then
    start_failed "$STARTING_DIR"
  fi
  return "$rc"
}

cmd_start() {
  local dir=$1
  shift
  local plugin="" fake_cpus="" gpus=0
  local -a plugin_args=()
  while (($# > 0)); do
    case $1 in
      --plugin)
        (($# >= 2)) || usage
        plugin=$2
        shift 2
        ;;
      --plugin-arg)
        (($# >= 2)) || usage
        [[ $2 =~ ^[A-Za-z_]+=[^[:space:]]*$ ]] || die "--plugin-arg wants KEY=VALUE without spaces, got '$2'"
        plugin_args+=("$2")
        shift 2
        ;;
      --fake-cpus)
        (($# >= 2)) || usage
        fake_cpus=$2
        shift 2
        ;;
      --gpus)
        (($# >= 2)) || usage
        gpus=$2
        shift 2
        ;;
      *) usage ;;
    esac
  done
  [[ -z $fake_cpus || $fake_cpus =~ ^[1-9][0-9]*$ ]] ||
    die "--fake-cpus wants a positive integer, got '$fake_cpus'"
  [[ $gpus =~ ^[0-9]+$ ]] || die "--gpus wants a non-negative integer, got '$gpus'"
  if [[ -n $plugin ]]; then
    [[ -f $plugin ]] || die "SPANK plugin $plugin does not exist"
    plugin=$(realpath "$plugin")
  fi
  (($(id -u) == 0)) || die "must run as root (slurmd launches job steps; fake GPUs need mknod)"
  local tool
  for tool in "$SLURM_SBIN/slurmctld" "$SLURM_SBIN/slurmd" "$SLURM_SBIN/munged" scontrol sinfo; do
    command -v "$tool" >/dev/null || die "$tool not found: run scripts/install-deps"
  done

  # Restarting is always clean: whatever an earlier run in this DIR left behind goes first, along
  # with its job and node state (a node drained by an earlier bad config would stay drained).
  cmd_stop "$dir"
  rm -rf "${dir:?}"/{state,spool,log,run,dev,tmp,etc,env.sh}
  mkdir -p "$dir"/{etc,state,spool,log,run,dev,tmp}
  chmod 755 "$dir/run"

  # Any failure from here on (a die, or a command failing under set -e) dumps the logs and stops
  # whatever did start, so that a failed start leaves no daemons behind.
  STARTING_DIR=$dir
  trap on_exit EXIT

  local host
  host=$(hostname -s)

  # Ports: a fixed base if asked for, else one derived from DIR, moving on while taken.
  local base slot
  if [[ -n ${DTRAIN_SLURM_PORT_BASE:-} ]]; then
    base=$DTRAIN_SLURM_PORT_BASE
    [[ $base =~ ^[0-9]+$ ]] || die "DTRAIN_SLURM_PORT_BASE must be a port number"
    if port_in_use "$base" || port_in_use $((base + 1)); then
      die "port $base or $((base + 1)) is in use (DTRAIN_SLURM_PORT_BASE)"
    fi
    slot=0
  else
    slot=$(($(cksum <<<"$dir" | cut -d' ' -f1) % 500))
    local tries
    for ((tries = 0; tries < 50; tries++)); do
      base=$((17000 + 2 * slot))
      if ! port_in_use "$base" && ! port_in_use $((base + 1)); then
        break
      fi
      slot=$(((slot + 1) % 500))
    done
  fi

  # Node shape: the truth from slurmd -C, or a lie (--fake-cpus). Lying needs config_overrides,
  # and task/none because task/affinity cannot lay out more tasks than real CPUs.
  local detected sockets cores threads cpus mem task_plugin
  detected=$("$SLURM_SBIN/slurmd" -C | head -1)
  mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$detected")
  mem=$((${mem:-2048} / 2))
  if [[ -n $fake_cpus ]]; then
    read -r sockets cores threads < <(fake_topology "$fake_cpus")
    task_plugin=task/none
  else
    sockets=$(sed -n 's/.*SocketsPerBoard=\([0-9]*\).*/\1/p' <<<"$detected")
    cores=$(sed -n 's/.*CoresPerSocket=\([0-9]*\).*/\1/p' <<<"$detected")
    threads=$(sed -n 's/.*ThreadsPerCore=\([0-9]*\).*/\1/p' <<<"$detected")
    [[ -n $sockets && -n $cores && -n $threads ]] || die "cannot parse 'slurmd -C': $detected"
    task_plugin=task/affinity
  fi
  cpus=$((sockets * cores * threads))

  # Private munge: its own key copy and socket, so no system munged is needed or disturbed.
  local munge_socket=${DTRAIN_SLURM_MUNGE_SOCKET:-}
  local private_munge=0
  if [[ -z $munge_socket ]]; then
    private_munge=1
    munge_socket=$dir/run/munge.socket
  fi

  local gres_node="" gres_types=""
  if ((gpus > 0)); then
    gres_types="GresTypes=gpu"
    gres_node=" Gres=gpu:$gpus"
  fi

  local node_line="NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus Boards=1"
  node_line+=" SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads"
  node_line+=" RealMemory=$mem$gres_node State=UNKNOWN"

  cat >"$dir/etc/slurm.conf" <<EOF
# Written by tests/integration/slurm/cluster.sh; rewritten at every start.
ClusterName=dtrain
# The node and controller are addressed as 127.0.0.1 whatever the host name resolves to.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# The PMIx plugin keeps per-step directories under TmpFS, named by job id: private, so that two
# clusters on one machine cannot clash.
TmpFS=$dir/tmp
# Job ids differ between clusters in different DIRs for the same reason (MPI session directories).
FirstJobId=$((slot * 10000 + 1))
$(slurm_conf_common "$dir" "$task_plugin")
$gres_types
$node_line
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  # Fake GPUs must be character devices: with regular files slurmd drops them and sets no
  # CUDA_VISIBLE_DEVICES, and without File= the node goes INVAL. Nothing ever opens them.
  {
    echo "AutoDetect=off"
    if ((gpus > 0)); then
      local i
      for ((i = 0; i < gpus; i++)); do
        mknod "$dir/dev/nvidia$i" c 195 "$i"
      done
      echo "NodeName=$host Name=gpu File=$dir/dev/nvidia[0-$((gpus - 1))]"
    fi
  } >"$dir/etc/gres.conf"

  {
    if [[ -n $plugin ]]; then
      echo "required $plugin${plugin_args[*]:+ ${plugin_args[*]}}"
    fi
    # PBS_* variables in jobs, for the Torque (qsub) compatibility tests.
    if [[ -f $PLUGIN_DIR/spank_pbs.so ]]; then
      echo "optional $PLUGIN_DIR/spank_pbs.so"
    fi
  } >"$dir/etc/plugstack.conf"

  cat >"$dir/env.sh" <<EOF
# Source this to use the private Slurm cluster in $dir (written by cluster.sh start).
# Variables of a foreign Slurm job (a CI runner's own allocation) would make srun/sbatch try to
# join that job; inside a job of this cluster they are kept.
if [ "\${SLURM_CONF:-}" != "$dir/etc/slurm.conf" ]; then
  for _dtrain_v in \$(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "\$_dtrain_v"
  done
  unset _dtrain_v
fi
export SLURM_CONF="$dir/etc/slurm.conf"
export DTRAIN_SLURM_DIR="$dir"
export DTRAIN_SLURM_MUNGE_SOCKET="$munge_socket"
# The cluster runs jobs as root; Open MPI's mpirun refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF

  unset_foreign_slurm_env
  export SLURM_CONF=$dir/etc/slurm.conf

  # The daemons fork into the background; their stdio goes to files so that they never hold the
  # caller's pipes open (ctest waits for a test's output pipe to close, and would hang until stop).
  if ((private_munge)); then
    local key=$dir/run/munge.key
    if [[ -r /etc/munge/munge.key ]]; then
      install -m 600 /etc/munge/munge.key "$key"
    else
      mungekey --create --keyfile="$key" 2>>"$dir/log/munged.stdout"
    fi
    # --force: munged refuses to start when any parent of its files is group-writable (a build
    # directory under a umask 002 home, say); here that is only worth a warning in its log.
    "$SLURM_SBIN/munged" --force --socket="$munge_socket" --key-file="$key" \
      --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
      --seed-file="$dir/run/munged.seed" </dev/null >>"$dir/log/munged.stdout" 2>&1 ||
      die "munged failed to start"
  fi
  munge --socket="$munge_socket" -n </dev/null | unmunge --socket="$munge_socket" >/dev/null ||
    die "munge on $munge_socket does not work"

  # Both report a failed initialisation (bad config, a SPANK plugin that does not load) in their
  # exit status before they go to the background.
  "$SLURM_SBIN/slurmctld" -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.stdout" 2>&1 ||
    die "slurmctld failed to start"
  "$SLURM_SBIN/slurmd" -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmd.stdout" 2>&1 ||
    die "slurmd failed to start"

  local deadline=$((SECONDS + ${DTRAIN_SLURM_START_TIMEOUT:-30})) state resumed=0
  until timeout "$CLIENT_TIMEOUT" scontrol ping 2>/dev/null | grep -q 'is UP'; do
    ((SECONDS < deadline)) || die "slurmctld did not answer 'scontrol ping'"
    live_pid "$dir/run/slurmctld.pid" slurmctld >/dev/null || [[ ! -e $dir/run/slurmctld.pid ]] ||
      die "slurmctld exited"
    sleep 0.1
  done
  while :; do
    state=$(timeout "$CLIENT_TIMEOUT" sinfo -h -N -o %T 2>/dev/null | head -1 || true)
    [[ $state == idle ]] && break
    if [[ $state == *drain* && $resumed == 0 ]]; then
      log "node is $state, resuming it"
      timeout "$CLIENT_TIMEOUT" scontrol update nodename="$host" state=resume || true
      resumed=1
    fi
    ((SECONDS < deadline)) || die "node did not become idle (last state: '${state:-none}')"
    sleep 0.1
  done

  STARTING_DIR=""
  log "up: $dir (ports $base/$((base + 1)), $cpus CPUs $sockets:$cores:$threads," \
    "$gpus GPUs${plugin:+, plugin $plugin})"
}

main() {
  (($# >= 2)) || usage
  local cmd=$1 dir=$2
  shift 2
  [[ -n $dir ]] || usage
  # Absolute, because the path goes into config files read by daemons with another cwd.
  dir=$(realpath -m "$dir")
  # start wipes DIR/etc, DIR/dev, ...: never let that be the root's.
  [[ $dir != / ]] || die "DIR must not be /"
  case $cmd in
    start) cmd_start "$dir" "$@" ;;
    stop)
      (($# == 0)) || usage
      cmd_stop "$dir"
      ;;
    status)
      (($# == 0)) || usage
      cmd_status "$dir"
      ;;
    *) usage ;;
  esac
}

main "$@"
