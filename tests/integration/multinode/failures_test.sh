#!/usr/bin/env bash
# Failures across nodes, as a user meets them: the Fashion-MNIST example runs through
# `dtrain submit` on 2 nodes x 2 ranks (DTRAIN_TIMEOUT=5), and once every rank is training, the
# harness does to rank 3 (on node2) what a fault would:
#   kill-mpi, kill-tcp  SIGKILL, on the MPI backend (DTRAIN_TRANSPORT=mpi) and on the
#                       torchrun-style TCP one: the job
#                       ends within 30 s, every survivor's error names rank 3 and node2, and
#                       `dtrain logs --first-error` names rank 3 on node2 as the culprit;
#   hang                SIGSTOP: `dtrain logs --hang` names rank 3, node2 and the collective;
#   lose-node           node2 lost whole (its slurmd and every process on it): `dtrain submit
#                       --wait` names the node, and the checkpoints on the shared file system
#                       still load (a run on the remaining nodes resumes from the latest).
#   failures_test.sh CASE CLUSTER_DIR CLUSTER_SH DTRAIN TRAIN TRAIN_JOB
set -euo pipefail
case_name=$1
source "$2/env.sh"
source "$(dirname "$0")/lib.sh"
cluster_dir=$2 cluster_sh=$3 DTRAIN=$4 TRAIN=$5 TRAIN_JOB=$6
work=$(scratch_dir)
submit_pid=
cleanup() {
  [[ -n $submit_pid ]] && kill "$submit_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# True once every rank has recorded 20 steps: in its metric records (the example's Meter), or
# with ready=events, in train_job's events-rank-R.log.
ready=metrics
trained() {
  local r n
  for r in 0 1 2 3; do
    if [[ $ready == events ]]; then
      n=$(grep -c '^step ' "events-rank-$r.log" 2>/dev/null) || true
    else
      n=$(grep -c '"type":"step"' "$run_dir/rank-0000$r.jsonl" 2>/dev/null) || true
    fi
    ((${n:-0} >= 20)) || return 1
  done
}

# submit BACKEND [extra YAML lines]: starts `dtrain submit --wait` of 2 x 2 ranks in the
# background, output in $work/submit.out; waits until every rank has done 20 steps and sets
# run_dir and pid3 (rank 3's training process, on node2).
submit() {
  local backend=$1 i
  shift
  {
    cat <<YAML
name: faults
site: slurm
nodes: 2
ranks_per_node: 2
walltime: "00:05:00"
partition: debug
affinity: {gpu: none, cpu: none}
YAML
    if [[ $backend == tcp ]]; then
      echo "framework: torch"
      echo "env: {DTRAIN_TIMEOUT: \"5\", DTRAIN_BOOTSTRAP: tcp}"
    else
      echo "env: {DTRAIN_TIMEOUT: \"5\", DTRAIN_TRANSPORT: mpi}"
    fi
    printf '%s\n' "$@"
  } >job.yaml
  grep -q '^command:' job.yaml || echo "command: [$TRAIN, --epochs, \"1\", --no-checkpoint]" >>job.yaml
  # Created here: the background shell may open it only after the first read below (set -e).
  : >submit.out
  timeout 280 "$DTRAIN" submit job.yaml --wait >submit.out 2>&1 &
  submit_pid=$!
  run_dir=""
  for ((i = 0; i < 600; i++)); do
    [[ -n $run_dir ]] || run_dir=$(sed -n 's/^dtrain: submitted job .* run directory \(.*\)$/\1/p' submit.out)
    if [[ -n $run_dir ]] && trained; then break; fi
    kill -0 "$submit_pid" 2>/dev/null || fail "the job ended before training: $(cat submit.out)"
    sleep 0.2
  done
  trained || fail "the ranks did not reach step 20: $(cat submit.out)"
  pid3=$(sed -n 's/.* dtrain: rank 3 of 4 started on node2 (local rank 1 of 2, pid \([0-9]*\)).*/\1/p' "$run_dir/rank-00003.log")
  [[ -n $pid3 ]] || fail "no start line of rank 3 on node2: $(head -3 "$run_dir/rank-00003.log")"
}

# Waits for the background submit; sets status to its exit status.
finish() {
  status=0
  wait "$submit_pid" || status=$?
  submit_pid=
}

kill_case() { # backend, the regex each survivor's error must match
  local backend=$1 expect=$2 t0 took r line report
  submit "$backend"
  t0=$SECONDS
  kill -KILL "$pid3"
  finish
  took=$((SECONDS - t0))
  ((status != 0)) || fail "the job succeeded after rank 3 was killed: $(cat submit.out)"
  ((took < 30)) || fail "the job took $took s to end after rank 3 was killed; expected under 30 s"
  echo "ok: the job ended $took s after rank 3 was killed (exit status $status)"
  for r in 0 1 2; do
    line=$(grep -E "$expect" "$run_dir/rank-0000$r.log" | head -1) ||
      fail "rank $r's log has no error matching /$expect/: $(tail -5 "$run_dir/rank-0000$r.log")"
    echo "ok: rank $r: ${line#* }"
  done
  report=$("$DTRAIN" logs --first-error "$run_dir")
  expect_contains "$report" "first failure: rank 3 on node2 was killed by signal 9 (SIGKILL)" "--first-error"
  echo "ok: $(head -1 <<<"$report")"
}

case $case_name in
  kill-mpi)
    kill_case mpi 'peer process lost: rank 3 \(on node2\) was killed or exited without finalizing'
    ;;
  kill-tcp)
    kill_case tcp 'rank 3 \(on node2\) closed its connection \(it exited or was killed\)'
    ;;
  hang)
    submit mpi
    kill -STOP "$pid3"
    finish
    ((status != 0)) || fail "the job succeeded with rank 3 stopped"
    hang=$("$DTRAIN" logs --hang "$run_dir") || true
    expect_match "$hang" 'rank 3 on node2: (entered|last entered) #[0-9]+' "dtrain logs --hang"
    expect_match "$hang" '(ranks? 3 never (entered|left)|never left it)' "dtrain logs --hang"
    echo "ok: $hang"
    report=$("$DTRAIN" logs --first-error "$run_dir")
    expect_contains "$report" "first failure: rank 3 on node2" "--first-error of a hang"
    echo "ok: $(head -1 <<<"$report")"
    ;;
  lose-node)
    # Whatever happens, node2 rejoins for the tests after this one.
    trap 'cleanup; bash "$cluster_sh" revive-node "$cluster_dir" 2 >/dev/null 2>&1 || true' EXIT
    steps=300
    args=(--steps "$steps" --sleep-ms 20 --save-every 10)
    echo "== reference: the same training on 2 nodes, uninterrupted"
    timeout 120 srun --mpi=pmix -N2 --ntasks-per-node=2 "$TRAIN_JOB" "${args[@]}" \
      --dir "$work/ref/ckpt" --out "$work/ref/final.txt" >/dev/null || fail "the reference run failed"
    rm -f events-rank-*.log
    ready=events
    submit mpi "command: [$TRAIN_JOB, $(printf '"%s", ' "${args[@]}")--dir, $work/ckpt, --out, $work/final.txt]"
    bash "$cluster_sh" lose-node "$cluster_dir" 2
    finish
    ((status != 0)) || fail "the job succeeded without node2: $(cat submit.out)"
    expect_contains "$(cat submit.out)" "ended because a node failed: node2 (Not responding)" "dtrain submit --wait"
    echo "ok: $(grep 'a node failed' submit.out)"
    report=$("$DTRAIN" logs --first-error "$run_dir")
    expect_match "$(head -1 <<<"$report")" '^first failure: rank [23] on node2 went silent' "--first-error"
    echo "ok: $(head -1 <<<"$report")"
    echo "== the checkpoints on the shared file system load: the run resumes on the other nodes"
    timeout 120 srun --mpi=pmix -N2 --ntasks-per-node=2 -x node2 "$TRAIN_JOB" "${args[@]}" \
      --dir "$work/ckpt" --out "$work/final.txt" >/dev/null || fail "the resumed run failed"
    resumed=$(sed -n 's/^start step=\([0-9]*\) restart=[0-9]*$/\1/p' events-rank-0.log | tail -1)
    [[ $resumed =~ ^[0-9]+$ ]] && ((resumed >= 10)) ||
      fail "rank 0 did not resume from a checkpoint: $(grep '^start' events-rank-0.log)"
    cmp ref/final.txt final.txt || fail "the resumed model differs from the uninterrupted one"
    echo "ok: resumed at step $resumed; the final model equals the uninterrupted run's"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
echo PASS
