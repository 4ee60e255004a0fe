#!/usr/bin/env bash
# Preemption under an MPI launcher, as a scheduler does it: SIGUSR1 to the launcher (Open MPI's
# mpirun and MPICH's Hydra mpiexec both pass it on to every rank), the ranks stop at one step, save
# and exit with dtrain::kExitRequeue (85); the same launch again resumes after that step, and the
# final model equals an uninterrupted run's (train_job.cpp's model depends on every step's data).
#   launcher_preempt_test.sh TRAIN_JOB LAUNCHER ARGS...    e.g. ... ./train_job mpiexec.mpich -n 2
set -euo pipefail
train=$1
shift
launcher=("$@")
steps=40
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "launcher_preempt_test: FAIL: $*" >&2
  exit 1
}
run() {  # run NAME [ARGS...]: one launch into $work/NAME, bounded
  local name=$1
  shift
  mkdir -p "$work/$name"
  timeout -k 10 120 "${launcher[@]}" "$train" --steps "$steps" --dir "$work/$name/ckpt" \
    --out "$work/$name/final" "$@" >>"$work/$name/output" 2>&1
}
steps_done() {  # steps rank 0 has logged in $work/$1
  grep -c '^step ' "$work/$1/events-rank-0.log" 2>/dev/null || true
}

run whole || fail "the uninterrupted run failed: $(cat "$work/whole/output")"

# Preempted: the launcher itself is signalled (not `timeout`, which would not pass SIGUSR1 on),
# once rank 0 is 5 steps in; a watchdog bounds it instead.
mkdir -p "$work/cut"
"${launcher[@]}" "$train" --steps "$steps" --dir "$work/cut/ckpt" --out "$work/cut/final" \
  --sleep-ms 200 >"$work/cut/output" 2>&1 &
pid=$!
watchdog() {  # ends by itself as soon as the launch has ended: no stray sleep holds ctest's pipe
  for ((t = 0; t < 1200; t++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
watchdog >/dev/null 2>&1 &
watchdog=$!
for ((i = 0; i < 600; i++)); do
  n=$(steps_done cut)
  ((${n:-0} >= 5)) && break
  sleep 0.1
done
kill -USR1 "$pid"
status=0
wait "$pid" || status=$?
wait "$watchdog" || true
cat "$work/cut/output"
# MPICH's Hydra (4.0.2) exits 0 or 85 after it passed the signal on and both ranks exited 85 (4 of
# 6 runs 0): its status does not carry the requeue (docs/install.md); Open MPI's mpirun's does.
hydra=false
[[ $(basename "${launcher[0]}") == mpiexec.mpich || $(basename "${launcher[0]}") == mpiexec.hydra ]] &&
  hydra=true
if [[ $hydra == false ]]; then
  ((status == 85)) || fail "the preempted launch exited $status; expected the ranks' 85 (dtrain::kExitRequeue)"
elif ((status != 0 && status != 85)); then
  fail "the preempted launch exited $status; expected the ranks' 85 (or Hydra's 0)"
fi
stops=()
for r in 0 1; do
  line=$(grep '^stop ' "$work/cut/events-rank-$r.log" || true)
  [[ $line =~ ^stop\ step=([0-9]+)\ signal=10$ ]] ||
    fail "rank $r: expected \"stop step=S signal=10\" (SIGUSR1 passed on by the launcher), got \"$line\""
  stops+=("${BASH_REMATCH[1]}")
done
[[ ${stops[0]} == "${stops[1]}" ]] || fail "ranks stopped at steps ${stops[*]}; expected one step"
((stops[0] < steps - 1)) || fail "stopped at step ${stops[0]}: the signal came too late to test"

run cut || fail "the resumed run failed: $(cat "$work/cut/output")"
for r in 0 1; do
  grep -qx "start step=$((stops[0] + 1)) restart=0" "$work/cut/events-rank-$r.log" ||
    fail "rank $r: expected a resume at step $((stops[0] + 1)); its events: $(cat "$work/cut/events-rank-$r.log")"
done
cmp -s "$work/whole/final" "$work/cut/final" ||
  fail "the resumed model differs from the uninterrupted one: $(paste "$work/whole/final" "$work/cut/final" | tr '\n' ' ')"
echo "launcher_preempt_test: PASS: both ranks stopped at step ${stops[0]} on SIGUSR1 and resumed to the uninterrupted model"
