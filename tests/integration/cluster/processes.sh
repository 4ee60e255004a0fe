# Process helpers and the common slurm.conf lines shared by the test clusters' scripts
# (tests/integration/slurm/cluster.sh, one node on localhost; tests/integration/cluster/cluster.sh,
# many namespace nodes). Sourced.

log() { echo "cluster.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# Prints the pid recorded in pid file $1 if that process is alive and its name is $2. Checking the
# name keeps a stale pid file (after a reboot, say) from making us signal an unrelated process.
live_pid() {
  local file=$1 name=$2 pid comm
  [[ -r $file ]] || return 1
  read -r pid <"$file" || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  read -r comm 2>/dev/null <"/proc/$pid/comm" || return 1
  [[ $comm == "$name" ]] || return 1
  echo "$pid"
}

# True if process $1 exists and is not a zombie. A daemon's exited fork parent (or the daemon
# itself, until init reaps it) lingers as a zombie, and kill -0 succeeds on zombies.
is_alive() {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# Sends SIGTERM to the given pids, waits up to $1 seconds for them to exit, then SIGKILLs the rest.
# All at once: each Slurm daemon takes 1-2 s to exit on SIGTERM here.
terminate() {
  local grace=$1 pid alive i
  shift
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    alive=0
    for pid in "$@"; do
      if is_alive "$pid"; then
        alive=1
      fi
    done
    ((alive)) || return 0
    sleep 0.1
  done
  log "still alive after ${grace}s, sending SIGKILL: $*"
  kill -KILL "$@" 2>/dev/null || true
  sleep 0.2
}

# A caller inside a job of some other Slurm cluster (CI runners often are) carries SLURM_JOB_ID and
# friends; the daemons and clients started here must not think they are part of that job.
unset_foreign_slurm_env() {
  local v
  for v in $(compgen -e); do
    if [[ $v == SLURM_* ]]; then
      unset "$v"
    fi
  done
}

# The slurm.conf lines both localhost clusters (this folder's and ../slurm's) share: no
# accounting, the backfill scheduler without its batch delay (batch jobs otherwise wait up to 3 s
# before they are scheduled, even on an idle node; with 0 they start at the next 1 s tick), cores
# as the unit, PMIx, nodes back in service on their own, the SPANK plugstack of DIR.
#   slurm_conf_common DIR TASK_PLUGIN
slurm_conf_common() {
  cat <<CONF
ProctrackType=proctrack/linuxproc
TaskPlugin=$2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$1/etc/plugstack.conf
MailProg=/bin/true
KillWait=5
MinJobAge=300
CONF
}
