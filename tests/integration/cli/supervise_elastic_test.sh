#!/usr/bin/env bash
# `dtrain supervise --min-nodes` (an elastic `nodes: MIN..MAX`) asks the scheduler the job was
# planned for, the site of the run directory's job.yaml, never Slurm by default: a PBS Pro job is
# refused naming its scheduler, a Slurm one outside a Slurm job naming SLURM_JOB_NODELIST, each
# with status 2 before any attempt. Then a whole restart without a cluster: stand-ins for sinfo
# (node n3 down) and srun (records its words and SLURM_NTASKS; the first attempt saves a
# checkpoint and fails) show the second attempt's srun on the 2 nodes left, without n3, and
# without the batch step's task count. Seconds, no scheduler.
#   supervise_elastic_test.sh DTRAIN
set -euo pipefail
DTRAIN=$1
source "$(dirname "$0")/lib.sh"
enter_workdir supervise-elastic

mkdir run bin
job_yaml() {  # SITE
  printf 'name: x\nsite: %s\nnodes: 2..3\nrestarts: 1\ncommand: [./train]\n' "$1" >run/job.yaml
}
supervise=("$DTRAIN" supervise --run-dir run --restarts 1 --backoff 0 --min-nodes 2 --)

echo "== refusals, before any attempt"
expect_status_and_message 2 \
  "dtrain: run/job.yaml: cannot open it: No such file or directory; expected a job spec (YAML)" \
  "${supervise[@]}" touch attempted
job_yaml polaris
expect_status_and_message 2 \
  "dtrain: supervise: --min-nodes: the job's scheduler, pbspro (its run directory's job.yaml), cannot run a job on fewer nodes; expected a job of slurm" \
  env SLURM_JOB_NODELIST='n[1-3]' "${supervise[@]}" touch attempted
job_yaml slurm
expect_status_and_message 2 \
  "dtrain: supervise: --min-nodes needs SLURM_JOB_NODELIST (it runs inside a Slurm job)" \
  env -u SLURM_JOB_NODELIST "${supervise[@]}" touch attempted
[[ ! -e attempted ]] || fail "an attempt ran after a refusal"

echo "== n3 lost: the next srun runs on the 2 nodes left"
cat >bin/sinfo <<'SH'
#!/usr/bin/env bash
echo "sinfo $*" >>"$LOG"
echo 'n3|down*|Not responding'
SH
cat >bin/srun <<'SH'
#!/usr/bin/env bash
echo "srun $* SLURM_NTASKS=${SLURM_NTASKS-unset} SLURM_NPROCS=${SLURM_NPROCS-unset}" >>"$LOG"
if [[ $DTRAIN_ATTEMPT == 0 ]]; then
  echo '{"v":1,"time":"2026-11-28T10:00:00Z","step":10,"path":"/ck","world":6}' >>run/checkpoints.jsonl
  exit 3
fi
SH
chmod +x bin/sinfo bin/srun
set +e
out=$(env PATH="$work/bin:$PATH" LOG="$work/calls.log" SLURM_JOB_NODELIST='n[1-3]' \
  SLURM_NTASKS=6 SLURM_NPROCS=6 "${supervise[@]}" srun --nodes=3 --ntasks-per-node=2 ./train 2>&1)
status=$?
set -e
echo "$out"
expect_eq 0 "$status" "exit status of the job that lost n3"
expect_eq "srun --nodes=3 --ntasks-per-node=2 ./train SLURM_NTASKS=6 SLURM_NPROCS=6
sinfo -h -N -n n[1-3] -t down,fail,no_respond,drain -o %N|%T|%E
srun --nodes=2 --exclude=n3 --overlap --ntasks-per-node=2 ./train SLURM_NTASKS=unset SLURM_NPROCS=unset" \
  "$(cat calls.log)" "the scheduler's commands, in order"
expect_contains "$out" "dtrain: attempt 1 failed; asking the scheduler (slurm) in 0 s which of its nodes are lost" "supervise"
expect_contains "$out" "dtrain: attempt 1 of 2 failed: node n3 lost (DOWN); restarting on 2 of 3 nodes (without n3)" "supervise"
expect_contains "$out" "dtrain: attempt 2 of 2 completed" "supervise"
echo PASS
