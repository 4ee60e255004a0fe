#!/usr/bin/env bash
# The SPANK plugin across nodes: `srun -N2 --ntasks-per-node=2 --dtrain...` and `#SBATCH --dtrain`
# on the fixture's cluster (4 fake GPUs per node, the Polaris-like topology). Every task on both
# nodes gets its global and per-node place, GPUs from its own node's grant, and the rendezvous
# variables of its framework pointing at the first node, which the second node can reach.
#   plugin_test.sh CLUSTER_DIR
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
work=$(scratch_dir)
trap 'rm -rf "$work"' EXIT

# Task r of a 2x2 step: node r/2, local rank r%2.
check_places() { # out
  local out=$1 r node
  for r in 0 1 2 3; do
    node=node$((r / 2 + 1))
    expect_eq "$node" "$(task_var $r HOST "$1")" "task $r's host"
    expect_eq "$r" "$(task_var $r DTRAIN_RANK "$out")" "task $r DTRAIN_RANK"
    expect_eq 4 "$(task_var $r DTRAIN_WORLD_SIZE "$out")" "task $r DTRAIN_WORLD_SIZE"
    expect_eq $((r % 2)) "$(task_var $r DTRAIN_LOCAL_RANK "$out")" "task $r DTRAIN_LOCAL_RANK"
    expect_eq 2 "$(task_var $r DTRAIN_LOCAL_SIZE "$out")" "task $r DTRAIN_LOCAL_SIZE"
    expect_eq "$(task_var 0 SLURM_JOB_ID "$out")" "$(task_var $r DTRAIN_JOB_ID "$out")" "task $r DTRAIN_JOB_ID"
  done
}

# GPUs: with --gpus-per-node=2 Slurm grants 2 of each node's 4; each task gets one of its node's
# grant, and the two tasks of a node different ones.
check_gpus() { # out
  local out=$1 r grant gpu
  for r in 0 1 2 3; do
    grant=$(task_var $r SLURM_STEP_GPUS "$out")
    [[ -n $grant ]] || grant=$(task_var $r SLURM_JOB_GPUS "$out")
    gpu=$(task_var $r CUDA_VISIBLE_DEVICES "$out")
    expect_match "$gpu" '^[0-3]$' "task $r CUDA_VISIBLE_DEVICES (one GPU)"
    expect_contains ",$grant," ",$gpu," "task $r's GPU within its node's grant"
    [[ -n $(task_var $r DTRAIN_CPUSET "$out") ]] || fail "task $r: no DTRAIN_CPUSET"
  done
  [[ $(task_var 0 CUDA_VISIBLE_DEVICES "$out") != $(task_var 1 CUDA_VISIBLE_DEVICES "$out") ]] ||
    fail "tasks 0 and 1 on node1 got the same GPU"
  [[ $(task_var 2 CUDA_VISIBLE_DEVICES "$out") != $(task_var 3 CUDA_VISIBLE_DEVICES "$out") ]] ||
    fail "tasks 2 and 3 on node2 got the same GPU"
}

echo "== srun -N2 --ntasks-per-node=2 --dtrain --dtrain-framework=torch"
timeout 120 srun -N2 --ntasks-per-node=2 --gpus-per-node=2 --dtrain --dtrain-framework=torch -l \
  sh -c 'echo HOST=$(hostname); env' >"$work/torch" 2>"$work/torch.err" ||
  fail "srun exited $?: $(cat "$work/torch.err")"
check_places "$work/torch"
check_gpus "$work/torch"
job=$(task_var 0 SLURM_JOB_ID "$work/torch")
port=$((61000 + job % 4536))
for r in 0 1 2 3; do
  for want in "MASTER_ADDR=node1" "MASTER_PORT=$port" "RANK=$r" "WORLD_SIZE=4" "LOCAL_RANK=$((r % 2))" \
    "LOCAL_WORLD_SIZE=2" "NODE_RANK=$((r / 2))" "GROUP_RANK=$((r / 2))"; do
    expect_eq "${want#*=}" "$(task_var $r "${want%%=*}" "$work/torch")" "task $r ${want%%=*}"
  done
done
echo "ok: torch variables, places and GPUs of 4 tasks on 2 nodes"

echo "== MASTER_ADDR is reachable from node2: rank 0 listens on MASTER_PORT, rank 2 connects"
timeout 120 srun -N2 --ntasks-per-node=1 --dtrain --dtrain-framework=torch -l /usr/bin/python3 -c '
import os, socket, sys, time
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if os.environ["RANK"] == "0":
    s = socket.create_server(("", port)); s.settimeout(60)
    c, peer = s.accept(); print("rank 0 on", socket.gethostname(), "accepted", c.recv(64).decode())
else:
    for _ in range(300):
        try:
            c = socket.create_connection((addr, port), timeout=5); break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("rank 1: cannot reach %s:%d" % (addr, port))
    c.sendall(("rank 1 on " + socket.gethostname()).encode())
' >"$work/reach" 2>&1 || fail "rendezvous across nodes: $(cat "$work/reach")"
expect_contains "$(cat "$work/reach")" "rank 0 on node1 accepted rank 1 on node2" "rendezvous"
echo "ok: $(grep accepted "$work/reach")"

echo "== tensorflow: TF_CONFIG lists the workers of both hosts"
timeout 120 srun -N2 --ntasks-per-node=2 --dtrain --dtrain-framework=tensorflow --dtrain-gpu=none -l \
  sh -c 'echo HOST=$(hostname); env' >"$work/tf" 2>"$work/tf.err" || fail "srun: $(cat "$work/tf.err")"
check_places "$work/tf"
for r in 0 1 2 3; do
  tf=$(task_var $r TF_CONFIG "$work/tf")
  expect_match "$tf" '^\{"cluster":\{"worker":\["node1:([0-9]+)","node1:([0-9]+)","node2:([0-9]+)","node2:([0-9]+)"\]\},"task":\{"type":"worker","index":'$r'\}\}$' "task $r TF_CONFIG"
  expect_eq "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}" "${BASH_REMATCH[3]} ${BASH_REMATCH[4]}" "TF ports on node1 and node2"
done
echo "ok: $(task_var 3 TF_CONFIG "$work/tf")"

echo "== jax and horovod"
timeout 120 srun -N2 --ntasks-per-node=2 --dtrain --dtrain-framework=jax --dtrain-gpu=none -l \
  sh -c 'echo HOST=$(hostname); env' >"$work/jax" 2>"$work/jax.err" || fail "srun: $(cat "$work/jax.err")"
check_places "$work/jax"
job=$(task_var 0 SLURM_JOB_ID "$work/jax")
for r in 0 1 2 3; do
  expect_eq "node1:$((61000 + job % 4536))" "$(task_var $r JAX_COORDINATOR_ADDRESS "$work/jax")" "task $r JAX_COORDINATOR_ADDRESS"
  expect_eq 4 "$(task_var $r JAX_NUM_PROCESSES "$work/jax")" "task $r JAX_NUM_PROCESSES"
  expect_eq $r "$(task_var $r JAX_PROCESS_ID "$work/jax")" "task $r JAX_PROCESS_ID"
  expect_eq $((r % 2)) "$(task_var $r JAX_LOCAL_PROCESS_ID "$work/jax")" "task $r JAX_LOCAL_PROCESS_ID"
done
timeout 120 srun -N2 --ntasks-per-node=2 --dtrain --dtrain-framework=horovod --dtrain-gpu=none -l \
  sh -c 'echo HOST=$(hostname); env' >"$work/hvd" 2>"$work/hvd.err" || fail "srun: $(cat "$work/hvd.err")"
check_places "$work/hvd"
[[ -z $(task_var 2 MASTER_ADDR "$work/hvd") ]] || fail "horovod: MASTER_ADDR set (Horovod rendezvous through MPI)"
echo "ok: jax coordinator on node1, horovod ranks from MPI with dtrain's places"

echo "== #SBATCH --dtrain: the directive applies to every step of a 2-node batch job"
cat >"$work/job.sh" <<SH
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=2 --gpus-per-node=2
#SBATCH --dtrain --dtrain-framework=torch
#SBATCH -o $work/batch.out
srun -l sh -c 'echo HOST=\$(hostname); env'
SH
job=$(timeout 10 sbatch --parsable "$work/job.sh")
state=$(wait_job "$job")
expect_eq COMPLETED "$state" "batch job $job ($(cat "$work/batch.out" 2>/dev/null | tail -5))"
check_places "$work/batch.out"
check_gpus "$work/batch.out"
expect_eq node1 "$(task_var 3 MASTER_ADDR "$work/batch.out")" "batch task 3 MASTER_ADDR"
echo "ok: batch job $job: 4 tasks on node1 and node2 bound by the directive"
echo PASS
