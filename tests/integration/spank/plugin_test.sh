#!/usr/bin/env bash
# The dtrain SPANK plugin on the fixture's localhost cluster (tests/integration/slurm): 4 fake GPUs
# and the plugstack argument topology=tests/fixtures/topologies/polaris-like-4xa100.xml, so every
# task's GPUs, cores and NICs follow that node's real layout (ALCF's Polaris affinity table: GPU 3
# next to NUMA 0, mlx5_0 under GPU 3's host bridge, mlx5_1 under GPU 1's).
#
# Usage: plugin_test.sh CASE PLUGIN_SO    (source the cluster's env.sh first)
set -euo pipefail
case_name=$1
plugin_so=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-spank-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}

# Expected per local rank on the Polaris-like node with 4 tasks (policy closest).
expected_gpu=(3 2 1 0)
expected_cpus=("0-7,32-39" "8-15,40-47" "16-23,48-55" "24-31,56-63")

# The value of variable $2 in task $1's lines of `srun -l env` output in file $3.
task_var() {
  sed -n "s/^ *$1: $2=//p" "$3" | head -1
}

# Checks the binding and torch variables of 4 tasks in `srun -l env` output file $1.
check_four_tasks() {
  local out=$1 r job port host nics=()
  host=$(hostname -s)
  job=$(task_var 0 SLURM_JOB_ID "$out")
  [[ -n $job ]] || fail "no SLURM_JOB_ID in the output: $(cat "$out")"
  # framework_env.hpp: 61000 + job id % 4536.
  port=$((61000 + job % 4536))
  for r in 0 1 2 3; do
    [[ $(task_var $r CUDA_VISIBLE_DEVICES "$out") == "${expected_gpu[r]}" ]] ||
      fail "task $r: CUDA_VISIBLE_DEVICES=$(task_var $r CUDA_VISIBLE_DEVICES "$out"), expected ${expected_gpu[r]}"
    [[ $(task_var $r DTRAIN_CPUSET "$out") == "${expected_cpus[r]}" ]] ||
      fail "task $r: DTRAIN_CPUSET=$(task_var $r DTRAIN_CPUSET "$out"), expected ${expected_cpus[r]}"
    [[ $(task_var $r CUDA_DEVICE_ORDER "$out") == PCI_BUS_ID ]] || fail "task $r: CUDA_DEVICE_ORDER"
    nics[r]=$(task_var $r DTRAIN_NICS "$out")
    [[ $(task_var $r NCCL_IB_HCA "$out") == "=${nics[r]}" ]] ||
      fail "task $r: NCCL_IB_HCA=$(task_var $r NCCL_IB_HCA "$out") for DTRAIN_NICS=${nics[r]}"
    [[ $(task_var $r UCX_NET_DEVICES "$out") == "${nics[r]}:1" ]] || fail "task $r: UCX_NET_DEVICES"
    local want
    for want in "RANK=$r" "LOCAL_RANK=$r" "WORLD_SIZE=4" "LOCAL_WORLD_SIZE=4" "NODE_RANK=0" \
      "MASTER_ADDR=$host" "MASTER_PORT=$port" "DTRAIN_LOCAL_RANK=$r" "DTRAIN_LOCAL_SIZE=4"; do
      [[ $(task_var $r "${want%%=*}" "$out") == "${want#*=}" ]] ||
        fail "task $r: ${want%%=*}=$(task_var $r "${want%%=*}" "$out"), expected ${want#*=}"
    done
  done
  # Each GPU with a NIC under its host bridge takes it; the two others share them out evenly.
  [[ ${nics[0]} == mlx5_0 && ${nics[2]} == mlx5_1 && ${nics[1]} != "${nics[3]}" ]] ||
    fail "NICs per task: ${nics[*]}"
}

# Waits for batch job $1 to finish; prints its state.
wait_job() {
  local state i
  for ((i = 0; i < 300; i++)); do
    state=$(scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
    sleep 0.2
  done
  echo "$state"
}

# Runs "$@", which must fail without launching anything, with the message $expected on stderr.
expect_refused() {
  local expected=$1 rc=0
  shift
  "$@" >"$scratch/out" 2>"$scratch/err" || rc=$?
  ((rc != 0)) || fail "'$*' succeeded: $(cat "$scratch/out" "$scratch/err")"
  grep -qF -- "$expected" "$scratch/err" || fail "'$*': expected '$expected' in: $(cat "$scratch/err")"
  ! grep -q LAUNCHED "$scratch/out" || fail "'$*' launched its command"
  echo "ok: $* -> $(grep -F -- "$expected" "$scratch/err" | head -1)"
}

case $case_name in
  help)
    srun --help >"$scratch/help"
    for opt in '--dtrain=POLICY' '--dtrain-gpu=closest|identity|none' \
      '--dtrain-gpu-visibility=own|own-first' '--dtrain-cpu=numa|none' \
      '--dtrain-nic=closest|all|none' '--dtrain-framework=torch|tensorflow|jax|horovod|none' \
      '--dtrain-run-dir=DIR' '--dtrain-verbose'; do
      grep -qF -- "$opt" "$scratch/help" || fail "srun --help lacks $opt"
    done
    [[ $(grep -c '\[dtrain\]' "$scratch/help") == 8 ]] || fail "expected 8 [dtrain] help texts"
    # The batch template detects the plugin with `srun --help | grep -q -- --dtrain`.
    grep -q -- '--dtrain' "$scratch/help" || fail "templates/slurm.sh.tmpl's detection fails"
    sbatch --help >"$scratch/sbatch-help"
    grep -qF -- '--dtrain-framework=torch|tensorflow|jax|horovod|none' "$scratch/sbatch-help" ||
      fail "sbatch --help lacks the options"
    echo "ok: srun --help and sbatch --help list all 8 options"
    ;;

  srun_torch)
    timeout 60 srun --dtrain --dtrain-framework=torch -n 4 -l env >"$scratch/out"
    check_four_tasks "$scratch/out"
    echo "ok: srun --dtrain --dtrain-framework=torch -n 4 env"
    ;;

  srun_gpus_per_task)
    # Slurm narrows CUDA_VISIBLE_DEVICES to one GPU per task; the plugin solves on the step's
    # grant (0-3) and gets the same map as without the request.
    timeout 60 srun --dtrain --dtrain-framework=torch --gpus-per-task=1 -n 4 -l env >"$scratch/out"
    check_four_tasks "$scratch/out"
    # A grant of two GPUs: node GPUs 0 and 1, closest first (GPU 1 is on NUMA 2, GPU 0 on 3).
    timeout 60 srun --dtrain --gpus=2 -n 2 -l env >"$scratch/out2"
    [[ $(task_var 0 CUDA_VISIBLE_DEVICES "$scratch/out2") == 1 &&
      $(task_var 1 CUDA_VISIBLE_DEVICES "$scratch/out2") == 0 ]] ||
      fail "--gpus=2: CUDA_VISIBLE_DEVICES $(grep CUDA_VISIBLE "$scratch/out2" | tr '\n' ' ')"
    [[ $(task_var 0 DTRAIN_CPUSET "$scratch/out2") == 16-23,48-55 ]] || fail "--gpus=2: cpuset"
    echo "ok: the step's GPU grant is honoured"
    ;;

  sbatch_directives)
    cat >"$scratch/job.sh" <<JOB
#!/bin/bash
#SBATCH -n 4
#SBATCH --dtrain
#SBATCH --dtrain-framework=torch
#SBATCH -o $scratch/job-%j.out
#SBATCH -e $scratch/job-%j.err
echo "BATCH CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES:-unset} RANK=\${RANK:-unset}"
srun -l env
JOB
    submitted=$(timeout 30 sbatch "$scratch/job.sh" 2>&1)
    # Nothing but sbatch's own line: Torque's qsub takes its last word as the job id.
    [[ $submitted =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "sbatch printed: $submitted"
    job=${BASH_REMATCH[1]}
    state=$(wait_job "$job")
    [[ $state == COMPLETED ]] || fail "job $job: $state: $(cat "$scratch"/job-"$job".*)"
    # The batch script itself is not a training task: it is left alone.
    grep -qx 'BATCH CUDA_VISIBLE_DEVICES=unset RANK=unset' "$scratch/job-$job.out" ||
      fail "batch script got bound: $(head -1 "$scratch/job-$job.out")"
    grep -E '^ *[0-9]+: ' "$scratch/job-$job.out" >"$scratch/out"
    check_four_tasks "$scratch/out"
    echo "ok: #SBATCH --dtrain --dtrain-framework=torch, srun -n 4 env inside"
    ;;

  command_line_wins)
    # Inside a job submitted with #SBATCH --dtrain..., srun's own options win over the inherited
    # ones, and DTRAIN_* variables fill in only what neither gave.
    cat >"$scratch/job.sh" <<JOB
#!/bin/bash
#SBATCH -n 4
#SBATCH --dtrain-framework=torch
#SBATCH -o $scratch/job-%j.out
export DTRAIN_CPU=none DTRAIN_GPU=closest
srun -l --dtrain-gpu=identity --dtrain-framework=none env
JOB
    submitted=$(timeout 30 sbatch "$scratch/job.sh")
    job=${submitted##* }
    [[ $(wait_job "$job") == COMPLETED ]] || fail "job $job: $(cat "$scratch/job-$job.out")"
    for r in 0 1 2 3; do
      [[ $(task_var $r CUDA_VISIBLE_DEVICES "$scratch/job-$job.out") == "$r" ]] ||
        fail "task $r: identity policy not applied"
    done
    ! grep -q 'MASTER_ADDR=' "$scratch/job-$job.out" || fail "--dtrain-framework=none lost"
    # DTRAIN_CPU=none: no CPU policy, so each task's cpuset is every allowed PU of the topology.
    [[ $(task_var 0 DTRAIN_CPUSET "$scratch/job-$job.out") == 0-63 ]] ||
      fail "DTRAIN_CPU=none not applied: $(task_var 0 DTRAIN_CPUSET "$scratch/job-$job.out")"
    echo "ok: command line > #SBATCH > DTRAIN_* variables"
    ;;

  bad_values)
    for bad in "--dtrain-gpu=nearest|dtrain: affinity: --dtrain-gpu: unknown policy \"nearest\"; expected closest, identity or none, got \"nearest\"" \
      "--dtrain-gpu-visibility=all|dtrain: affinity: --dtrain-gpu-visibility: unknown policy \"all\"; expected own or own-first, got \"all\"" \
      "--dtrain-cpu=socket|dtrain: affinity: --dtrain-cpu: unknown policy \"socket\"; expected numa or none, got \"socket\"" \
      "--dtrain-nic=fastest|dtrain: affinity: --dtrain-nic: unknown policy \"fastest\"; expected closest, all or none, got \"fastest\"" \
      "--dtrain-framework=pytorch|dtrain: --dtrain-framework: unknown framework \"pytorch\"; expected torch, tensorflow, jax, horovod or none, got \"pytorch\"" \
      "--dtrain=fast|dtrain: --dtrain: unknown word \"fast\"; expected a comma-separated list of default, closest, identity, own-first, off, strict or best-effort, got \"fast\"" \
      "--dtrain-run-dir=|dtrain: --dtrain-run-dir: expected a directory for the rank logs, got \"\""; do
      option=${bad%%|*}
      message=${bad#*|}
      expect_refused "srun: error: $message" timeout 60 srun "$option" -n 1 echo LAUNCHED
      name=dtrain-bad-$$-${option%%=*}
      expect_refused "sbatch: error: $message" timeout 30 sbatch -J "$name" "$option" --wrap 'echo LAUNCHED'
      [[ -z $(squeue -h -n "$name" -o %i) ]] || fail "sbatch $option queued a job"
    done
    printf '#!/bin/bash\n#SBATCH --dtrain-nic=nearest\necho LAUNCHED\n' >"$scratch/bad.sh"
    expect_refused 'sbatch: error: dtrain: affinity: --dtrain-nic: unknown policy "nearest"' \
      timeout 30 sbatch -J "dtrain-bad-$$-script" "$scratch/bad.sh"
    [[ -z $(squeue -h -n "dtrain-bad-$$-script" -o %i) ]] || fail "#SBATCH bad value queued a job"
    expect_refused 'srun: error: dtrain: affinity: DTRAIN_CPU: unknown policy "socket"; expected numa or none, got "socket"' \
      env DTRAIN_CPU=socket timeout 60 srun --dtrain -n 1 echo LAUNCHED
    expect_refused 'srun: error: dtrain: DTRAIN_VERBOSE: expected 1 or 0, got "loud"' \
      env DTRAIN_VERBOSE=loud timeout 60 srun -n 1 echo LAUNCHED
    # The same switch words as plugstack.conf's verbose=: off is accepted, not refused.
    [[ $(env DTRAIN_VERBOSE=off timeout 60 srun -n 1 echo LAUNCHED) == LAUNCHED ]] ||
      fail "DTRAIN_VERBOSE=off was refused"
    ;;

  bad_config)
    # srun loads the plugin itself: a private slurm.conf whose plugstack.conf has a typo.
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$scratch/plugstack.conf|" "$SLURM_CONF" >"$scratch/slurm.conf"
    for line in "topolgy=/x.xml|dtrain: plugstack.conf: unknown key \"topolgy\"; expected topology=PATH, default_policy=POLICY, enabled_by_default=0|1 or verbose=0|1, got \"topolgy=/x.xml\"" \
      "verbose=maybe|dtrain: plugstack.conf: verbose: expected 0 or 1 (or yes/no, true/false), got \"maybe\"" \
      "topology=node.xml|dtrain: plugstack.conf: topology: expected the absolute path of an hwloc XML file, got \"node.xml\""; do
      echo "required $plugin_so ${line%%|*}" >"$scratch/plugstack.conf"
      expect_refused "srun: error: ${line#*|}" env SLURM_CONF="$scratch/slurm.conf" timeout 60 srun -n 1 echo LAUNCHED
    done
    ;;

  run_dir_verbose)
    rc=0
    timeout 60 srun --dtrain --dtrain-verbose --dtrain-run-dir="$scratch/run" -n 2 -l \
      bash -c 'echo "out $SLURM_PROCID DTRAIN_RUN_DIR=$DTRAIN_RUN_DIR"; echo "err $SLURM_PROCID" >&2; exit 3' \
      >"$scratch/out" 2>"$scratch/err" || rc=$?
    ((rc == 3)) || fail "exit status $rc through the logger, expected 3: $(cat "$scratch/err")"
    grep -qx " *1: out 1 DTRAIN_RUN_DIR=$scratch/run" "$scratch/out" || fail "stdout: $(cat "$scratch/out")"
    grep -q "^ *1: err 1$" "$scratch/err" || fail "stderr: $(cat "$scratch/err")"
    for r in 0 1; do
      log=$scratch/run/rank-0000$r.log
      grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{6}Z out $r DTRAIN_RUN_DIR=" "$log" || fail "$log: $(cat "$log")"
      grep -Eq "^[0-9-]{10}T[0-9:.]{15}Z err $r$" "$log" || fail "$log lacks stderr: $(cat "$log")"
    done
    grep -q "^ *0: dtrain: $(hostname -s) task 0 (local 0 of 2): CUDA_VISIBLE_DEVICES=2,3 \[.*\] cpus=0-15,32-47 (numa 0) nics=mlx5_1,mlx5_0 not bound (topology .*polaris-like-4xa100.xml)$" "$scratch/err" ||
      fail "no --dtrain-verbose line: $(cat "$scratch/err")"
    echo "ok: --dtrain-run-dir logs, exit status, --dtrain-verbose"
    ;;

  task_failure)
    # A task that cannot be set up fails with the reason; best-effort runs it unbound instead.
    expect_refused "error: dtrain: --dtrain-run-dir: cannot create /proc/dtrain-nope" \
      timeout 60 srun --dtrain --dtrain-run-dir=/proc/dtrain-nope -n 2 echo LAUNCHED
    timeout 60 srun --dtrain=best-effort --dtrain-run-dir=/proc/dtrain-nope -n 2 \
      bash -c 'echo "LAUNCHED ${DTRAIN_CPUSET:-unbound}"' >"$scratch/out" 2>"$scratch/err"
    [[ $(grep -c 'LAUNCHED unbound' "$scratch/out") == 2 ]] || fail "best-effort: $(cat "$scratch/out")"
    grep -q "cannot create /proc/dtrain-nope.*(best-effort: this task runs unbound)" "$scratch/err" ||
      fail "best-effort gave no warning: $(cat "$scratch/err")"
    echo "ok: strict failure and best-effort"
    ;;

  missing_topology)
    # A topology= file slurmstepd cannot read fails the steps that ask for binding, naming the
    # file, and leaves the others alone. Needs its own cluster: slurmstepd takes plugstack.conf
    # from slurmd, not from the client's SLURM_CONF.
    cluster_sh=$(dirname "$0")/../slurm/cluster.sh
    (
      trap 'bash "$cluster_sh" stop "$scratch/cluster" >/dev/null 2>&1' EXIT
      bash "$cluster_sh" start "$scratch/cluster" --plugin "$plugin_so" \
        --plugin-arg topology=/nonexistent/dtrain-node.xml --fake-cpus 4 >/dev/null 2>&1 ||
        fail "second cluster did not start"
      # shellcheck disable=SC1091
      source "$scratch/cluster/env.sh"
      [[ $(timeout 60 srun -n 1 echo LAUNCHED) == LAUNCHED ]] || fail "a step without --dtrain failed"
      expect_refused "error: dtrain: topology: /nonexistent/dtrain-node.xml: cannot open it: No such file or directory" \
        timeout 60 srun --dtrain -n 1 echo LAUNCHED
    )
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
