#!/usr/bin/env bash
# `dtrain run` (torchrun's habit, docs/submit.md) is the job a spec would have made: for
# examples/pytorch-ddp the same launch script as `dtrain submit` of the spec a user would write;
# run for real (a command that prints its rank environment), the same terminal lines, run
# directory files, launch.sh, plan.json, job fields and rank environment; every bad flag named.
# With PYTORCH=1 (the bench test) both train examples/pytorch-ddp for real: the same losses and
# accuracy.
#   run_command_test.sh DTRAIN SRC
set -euo pipefail
DTRAIN=$1 SRC=$2
source "$SRC/tests/integration/cli/lib.sh"
enter_workdir run-command

# What differs between two runs of one job: its id and run directory (and the port derived
# from the id) and the lines' times.
normalize() { # run_dir
  local id=${1##*/bash-}
  sed -E -e "s|$1|RUN_DIR|g" -e "s|$id|JOB_ID|g" -e 's/^[0-9]{4}-[0-9-]+T[0-9:.]+Z? //' \
    -e 's/MASTER_PORT=[0-9]+/MASTER_PORT=PORT/'
}

echo "== examples/pytorch-ddp: dtrain run -n 2 --framework torch == submit of its spec (--dry-run)"
train=("/usr/bin/python3" "$SRC/examples/pytorch-ddp/train.py" --epochs 1 --steps-per-epoch 3)
cat >job.yaml <<YAML
name: train
ranks_per_node: 2
framework: torch
command: $(yaml_command "\"${train[0]}\"" "${train[@]:1}")
YAML
strip_id() { sed -E 's/[0-9]{8}-[0-9]{6}-[0-9]+/JOB_ID/g'; }
from_spec=$("$DTRAIN" submit job.yaml --dry-run | strip_id)
from_run=$("$DTRAIN" run -n 2 --framework torch --dry-run "${train[@]}" | strip_id)
expect_eq "$from_spec" "$from_run" "launch.sh of dtrain run and of the spec"
expect_contains "$from_run" "mpirun" "the local site's launcher"
expect_contains "$from_run" "run-rank --run-dir $work/runs/train-JOB_ID -- ${train[*]}" \
  "each word of the command, after run's own flags"

echo "== run for real: the same run directory, terminal, plan and rank environment"
line='env | grep -E "^(DTRAIN_|RANK=|WORLD_SIZE=|LOCAL_RANK=|LOCAL_WORLD_SIZE=|MASTER_|GROUP_RANK=)" | sort'
cat >env.yaml <<YAML
name: bash
ranks_per_node: 2
framework: torch
restarts: 1
command: ["bash", "-c", $(printf '%s' "$line" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]
YAML
out_spec=$("$DTRAIN" submit env.yaml 2>&1) || fail "submit exited $?: $out_spec"
spec_dir=$(ls -d "$work"/runs/bash-*)
out_run=$("$DTRAIN" run -n 2 --framework torch --restarts 1 bash -c "$line" 2>&1) ||
  fail "run exited $?: $out_run"
run_dir=$(ls -d "$work"/runs/bash-* | grep -vx "$spec_dir")
expect_eq "$(ls "$spec_dir")" "$(ls "$run_dir")" "the run directory's files"
for f in launch.sh plan.json; do
  expect_eq "$(normalize "$spec_dir" <"$spec_dir/$f")" \
    "$(normalize "$run_dir" <"$run_dir/$f")" "$f"
done
for r in 0 1; do
  want=$(rank_output "$spec_dir/rank-0000$r.log" | normalize "$spec_dir")
  got=$(rank_output "$run_dir/rank-0000$r.log" | normalize "$run_dir")
  expect_eq "$want" "$got" "rank $r's environment"
  expect_contains "$got" "RANK=$r" "rank $r's torch variables"
  expect_contains "$got" "DTRAIN_RUN_DIR=RUN_DIR" "rank $r's run directory"
done
# The terminal: the same lines, but for the ids, times and figures.
terminal() { grep -E '^dtrain: |^\[?[0-9]\]? ?[A-Z_]+=' <<<"$1" | grep -v '^dtrain: warning' | sort; }
expect_eq "$(terminal "$out_spec" | normalize "$spec_dir")" \
  "$(terminal "$out_run" | normalize "$run_dir")" "the terminal's lines"
# job.yaml: the same fields (run's is the spec its flags made).
job_fields() { python3 -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); print(sorted(d.items()))' "$1"; }
expect_eq "$(job_fields "$spec_dir/job.yaml")" "$(job_fields "$run_dir/job.yaml")" "job.yaml's fields"
echo "ok: $(ls "$run_dir" | wc -l) files, launch.sh, plan.json, 2 ranks' environment, terminal, job.yaml"

echo "== every bad flag is named with its value"
rm -rf runs
expect_status_and_message 2 'dtrain: run: -n,--nproc-per-node,--ranks-per-node: expected an integer from 1 to 1024, got "x"' \
  "$DTRAIN" run -n x ls
expect_status_and_message 2 'dtrain: run: --nodes: expected an integer from 1 to 100000, got "0"' \
  "$DTRAIN" run --nodes 0 ls
expect_status_and_message 2 'dtrain: run: --restarts: expected an integer from 0 to 1000, got "-1"' \
  "$DTRAIN" run --restarts -1 ls
expect_status_and_message 2 '--framework torchy: framework: expected one of: none, torch, tensorflow, jax, horovod, got "torchy" (did you mean "torch"?)' \
  "$DTRAIN" run --framework torchy ls
expect_status_and_message 2 '--site nope: site: expected one of: local, slurm' \
  "$DTRAIN" run --site nope ls
expect_status_and_message 2 "--name a b: name: expected 1 to 64 letters, digits, '.', '_' or '-'" \
  "$DTRAIN" run --name "a b" ls
expect_status_and_message 2 '--set ranks_per_node=x: ranks_per_node: expected an integer from 1 to 1024, got "x"' \
  "$DTRAIN" run --set ranks_per_node=x ls
expect_status_and_message 2 'dtrain: run: command is required; see dtrain run --help' "$DTRAIN" run -n 2
expect_status_and_message 2 'dtrain: submit: --here: this shell holds no allocation' \
  env -u SLURM_JOB_ID -u PBS_JOBID -u COBALT_JOBID "$DTRAIN" submit --here job.yaml
expect_status_and_message 2 'dtrain: submit: site local runs on local, and this shell holds slurm job 7 (SLURM_JOB_ID); expected a site on slurm (--site)' \
  env SLURM_JOB_ID=7 "$DTRAIN" submit --here job.yaml --dry-run
expect_status_and_message 2 'dtrain: run: site polaris runs on pbspro, and this shell holds slurm job 7 (SLURM_JOB_ID); expected a site on slurm (--site)' \
  env SLURM_JOB_ID=7 "$DTRAIN" run --site polaris --set account=a --set walltime=1:00 ls
expect_status_and_message 2 'dtrain: run: the job asks for 3 nodes, and allocation 7 (SLURM_JOB_ID) holds 2; expected nodes from 1 to 2' \
  env SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=2 "$DTRAIN" run --nodes 3 ls
[[ ! -e $work/runs ]] || fail "a refused run left $(ls "$work"/runs)"

echo "== inside an allocation: the site's job script with its launcher, on the nodes it holds"
script=$(env SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=2 "$DTRAIN" run -n 3 --dry-run ./pi --steps 1)
expect_contains "$script" "--nodes=2 --ntasks-per-node=3" "srun on the allocation's 2 nodes"
expect_contains "$script" "export DTRAIN_RUN_DIR=$work/runs/pi-7.0" "the first run's directory"
expect_contains "$script" "run-rank -- ./pi --steps 1)" "the command"
mkdir -p runs/pi-7.0
script=$(env SLURM_JOB_ID=7 SLURM_JOB_NUM_NODES=2 "$DTRAIN" run --nodes 1 --dry-run ./pi)
expect_contains "$script" "export DTRAIN_RUN_DIR=$work/runs/pi-7.1" "the next run's directory"
expect_contains "$script" "--nodes=1 --ntasks-per-node=1" "--nodes 1 of the 2"
script=$(env SLURM_JOB_ID=7 "$DTRAIN" run --site local --dry-run ./pi)
expect_contains "$script" "exec mpirun" "--site local inside an allocation: this machine"
rm -rf runs

echo "== the terminal: each rank's lines after [RANK]; as they are with --no-rank-prefix or no terminal"
say='echo "hello from $DTRAIN_RANK"; echo "warning from $DTRAIN_RANK" >&2'
# `script` gives dtrain run a terminal, as a person's shell does.
tty_out=$(script -qec "$(printf '%q ' "$DTRAIN" run -n 2 --name say bash -c "$say")" /dev/null | tr -d '\r')
for r in 0 1; do
  expect_contains "$tty_out" $'\n'"[$r] hello from $r"$'\n' "rank $r's line on the terminal"
  expect_contains "$tty_out" $'\n'"[$r] warning from $r"$'\n' "rank $r's stderr line on the terminal"
done
expect_contains "$tty_out" $'\n'"dtrain: job " "dtrain's own lines, without a prefix"
log=$(rank_output "$(ls -d "$work"/runs/say-*)/rank-00001.log")
expect_contains "$log" " hello from 1" "rank 1's log"
[[ $log != *"[1]"* ]] || fail "rank 1's log has the terminal's prefix: $log"
plain=$(script -qec "$(printf '%q ' "$DTRAIN" run -n 2 --no-rank-prefix bash -c "$say")" /dev/null | tr -d '\r')
expect_contains "$plain" $'\n'"hello from 1"$'\n' "--no-rank-prefix"
[[ $plain != *"[0] "* ]] || fail "--no-rank-prefix: a prefix in: $plain"
piped=$("$DTRAIN" run -n 2 bash -c "$say" 2>&1)
[[ $piped != *"[0] "* ]] || fail "output to a pipe: a prefix in: $piped"
echo "ok: [0] and [1] on a terminal, none with --no-rank-prefix or into a pipe, none in the logs"

if [[ ${PYTORCH:-0} == 1 ]]; then
  echo "== examples/pytorch-ddp trained by both: the same losses and accuracy"
  a=$("$DTRAIN" submit job.yaml --set "command=$(yaml_command "\"${train[0]}\"" "${train[@]:1}" --log-every 1)" 2>&1) || fail "submit: $a"
  b=$("$DTRAIN" run -n 2 --framework torch "${train[@]}" --log-every 1 2>&1) || fail "run: $b"
  pick() { grep -E 'step [0-9]+ loss|test accuracy' <<<"$1"; }
  expect_eq "$(pick "$a")" "$(pick "$b")" "losses and accuracy"
  pick "$b"
fi
echo PASS
