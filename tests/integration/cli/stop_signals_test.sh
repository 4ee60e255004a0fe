#!/usr/bin/env bash
# A signal that stops a local job stops it (issue 33, items 6-9; docs/submit.md, "Stopping a local
# job"): `dtrain submit` on the local site with real specs, real signals sent as a person or a
# terminal sends them, then what the user sees: submit's exit status and last line, attempts.jsonl
# (no attempt after the signal; a job stopped during the backoff is `stopped`, not `restarted`),
# `dtrain logs --first-error` and `dtrain stats`, and no process of the job left behind.
#   - SIGTERM to submit while attempt 0 runs (restarts, no walltime): before, submit exited 143 at
#     once and the supervisor went on with attempt 1;
#   - SIGUSR1 to submit with a walltime (the job under `timeout`): the same, through timeout;
#   - SIGTERM to the supervisor during the backoff: before, a `restarted` record and no attempt;
#   - Ctrl-C (SIGINT to submit's process group, as a terminal sends it) during the backoff of a job
#     with a walltime, and while a plain job with a walltime runs: before, both were lost (timeout
#     had moved the job out of the terminal's group, and submit ignored SIGINT);
#   - a rank that fails at once, without checkpoints: the supervisor says no checkpoint was
#     recorded by dtrain::Checkpointer, and how a program records its own;
#   - the supervisor killed (as the walltime's `timeout --foreground` kills it, 30 s after TERM):
#     its launch is killed with it.
# Each job is started in a process group of its own (set -m), with SIGINT at its default action,
# as an interactive shell starts a foreground job.
#   stop_signals_test.sh DTRAIN
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DTRAIN=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-stop-signals.XXXXXX")
# Every process of the jobs has $work in its command line (the spec path, the run directory):
# the marker for leftovers, and for the cleanup of a failed run.
cleanup() {
  pkill -KILL -f -- "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# The rank: says that it runs (running-ATTEMPT), then as MODE says.
#   wait        runs until it is stopped
#   progress    in attempt 0 records a step and a checkpoint as a program that saves its own
#               checkpoints does (docs/fault-tolerance.md), then fails with status 3; later
#               attempts run until stopped
#   fail        fails at once with status 3, having saved nothing
cat >rank.sh <<'SH'
attempt=${DTRAIN_ATTEMPT:-0}
touch "$(dirname "$0")/running-$attempt"
echo "attempt $attempt running"
case $1 in
  progress)
    if ((attempt == 0)); then
      now=$(date -u +%s.%N)
      echo "{\"v\":2,\"type\":\"step\",\"time\":$now,\"rank\":0,\"step\":1,\"samples\":8,\"seconds\":0.01,\"comm_seconds\":0}" \
        >>"$DTRAIN_RUN_DIR/rank-00000.jsonl"
      echo "{\"v\":1,\"time\":\"$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)\",\"step\":1,\"path\":\"/ck/1\",\"world\":1}" \
        >>"$DTRAIN_RUN_DIR/checkpoints.jsonl"
      echo "error: injected failure after step 1" >&2
      exit 3
    fi ;;
  fail)
    echo "error: cannot read the data" >&2
    exit 3 ;;
esac
while :; do sleep 0.1; done
SH

# A spec named NAME whose rank does MODE, with more spec lines after.
#   spec NAME MODE LINE...
spec() {
  local name=$1 mode=$2
  shift 2
  printf 'name: %s\nsite: local\ncommand: [bash, "%s/rank.sh", %s]\n' "$name" "$work" "$mode" >"$name.yaml"
  for line in "$@"; do echo "$line" >>"$name.yaml"; done
}

# Starts `dtrain submit NAME.yaml` in a process group of its own; sets pid and out (its output).
start() {
  rm -f running-*
  out=$1.out
  set -m
  "$DTRAIN" submit "$work/$1.yaml" >"$out" 2>&1 &
  pid=$!
  set +m
}

# Polls until FILE exists, or OUT has a line matching RE (then: until_output RE), for 60 s.
until_file() {
  for ((i = 0; i < 600; i++)); do
    [[ -e $1 ]] && return
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -e $1 ]] || fail "$1 never appeared: $(cat "$out")"
}
until_output() {
  for ((i = 0; i < 600; i++)); do
    grep -qE "$1" "$out" && return
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -qE "$1" "$out" || fail "no line matching [$1] in the output: $(cat "$out")"
}

# Waits for submit (60 s at most: a signal that is lost leaves a job waiting 600 s) and sets
# status; then no process of the job may be left.
finish() {
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "dtrain submit still runs 60 s after the signal: $(cat "$out")"
  status=0
  wait "$pid" || status=$?
  local left
  left=$(pgrep -af -- "$work" || true)
  [[ -z $left ]] || fail "processes of the job left after dtrain submit exited $status:"$'\n'"$left"$'\n'"$(cat "$out")"
}

run_dir() { ls -d "$work/runs/$1"-*; }

# attempts.jsonl of run NAME holds one record: attempt 0 with OUTCOME and a cause starting CAUSE.
expect_one_attempt() {  # name outcome cause
  /usr/bin/python3 - "$(run_dir "$1")/attempts.jsonl" "$2" "$3" <<'PY'
import json, sys
path, outcome, cause = sys.argv[1:]
lines = open(path).read().splitlines()
assert len(lines) == 1, f"expected 1 attempt record, got {len(lines)}: {lines}"
a = json.loads(lines[0])
assert a["attempt"] == 0 and a["outcome"] == outcome, a
assert a["cause"].startswith(cause), f"cause {a['cause']!r} does not start with {cause!r}"
PY
}

echo "== SIGTERM to dtrain submit while attempt 0 runs: the job stops, no attempt 1"
spec term wait "restarts: 1" "restart_backoff: 0"
start term
until_file running-0
kill -TERM "$pid"
finish
expect_eq 143 "$status" "exit status after SIGTERM ($(cat "$out"))"
[[ ! -e running-1 ]] || fail "attempt 1 started after SIGTERM: $(cat "$out")"
expect_contains "$(cat "$out")" "dtrain: attempt 1 of 2 stopped by SIGTERM; not restarting" "supervisor's line"
expect_contains "$(cat "$out")" "stopped by SIGTERM, passed on to the job (exit status 143)" "submit's last line"
expect_one_attempt term stopped "stopped by SIGTERM"

echo "== SIGUSR1 to dtrain submit of a job with a walltime (under timeout)"
spec usr1 wait "restarts: 1" "restart_backoff: 0" 'walltime: "00:10:00"'
start usr1
until_file running-0
kill -USR1 "$pid"
finish
expect_eq 138 "$status" "exit status after SIGUSR1 ($(cat "$out"))"
[[ ! -e running-1 ]] || fail "attempt 1 started after SIGUSR1: $(cat "$out")"
expect_one_attempt usr1 stopped "stopped by SIGUSR1"
grep -q 'was killed by signal 10 (SIGUSR1)' "$(run_dir usr1)/rank-00000.log" ||
  fail "the rank did not get SIGUSR1: $(cat "$(run_dir usr1)/rank-00000.log")"

echo "== SIGTERM to the supervisor during the backoff: a stopped record, the failure reported"
spec backoff progress "restarts: 1" "restart_backoff: 600"
start backoff
until_output "dtrain: attempt 1 of 2 failed: rank 0 on .* exited with status 3: .*; restarting in 600 s"
supervisor=$(pgrep -f -- "supervise --restarts 1 --backoff 600 .*$work/runs/backoff-")
kill -TERM "$supervisor"
finish
expect_eq 3 "$status" "exit status of the failed job stopped in its backoff ($(cat "$out"))"
[[ ! -e running-1 ]] || fail "attempt 1 started after SIGTERM: $(cat "$out")"
expect_contains "$(cat "$out")" "dtrain: attempt 1 of 2 stopped by SIGTERM during the backoff after it failed: rank 0 on " "supervisor's line"
expect_one_attempt backoff stopped "stopped by SIGTERM during the backoff after it failed: rank 0 on "
report=$("$DTRAIN" logs --first-error "$(run_dir backoff)" 2>&1) || fail "logs --first-error exited $?: $report"
expect_contains "$report" "attempt 1 of the job (stopped): the report below covers its lines only" "first-error report"
expect_contains "$report" "first failure: rank 0 on " "first-error report"
expect_contains "$report" "exited with status 3" "first-error report"
stats=$("$DTRAIN" stats "$(run_dir backoff)" 2>&1) || fail "dtrain stats exited $?: $stats"
[[ $stats != *"failed and restarted"* ]] || fail "dtrain stats counts a restart that never happened: $stats"

echo "== Ctrl-C during the backoff of a job with a walltime"
spec ctrlc progress "restarts: 1" "restart_backoff: 600" 'walltime: "00:10:00"'
start ctrlc
until_output "restarting in 600 s"
kill -INT -- "-$pid"
finish
expect_eq 130 "$status" "exit status after Ctrl-C ($(cat "$out"))"
[[ ! -e running-1 ]] || fail "attempt 1 started after Ctrl-C: $(cat "$out")"
expect_contains "$(cat "$out")" "stopped by SIGINT, passed on to the job (exit status 130)" "submit's last line"
expect_one_attempt ctrlc stopped "stopped by SIGINT during the backoff after it failed: rank 0 on "

echo "== Ctrl-C while a plain job with a walltime runs"
spec plain wait 'walltime: "00:10:00"'
start plain
until_file running-0
kill -INT -- "-$pid"
finish
expect_eq 130 "$status" "exit status after Ctrl-C ($(cat "$out"))"
expect_contains "$(cat "$out")" "stopped by SIGINT, passed on to the job (exit status 130)" "submit's last line"
[[ ! -e "$(run_dir plain)/attempts.jsonl" ]] || fail "a job without restarts wrote attempts.jsonl"

echo "== a quick failure without checkpoints: how the supervisor counts them"
spec quick fail "restarts: 1"
start quick
finish
expect_eq 3 "$status" "exit status of the failing job ($(cat "$out"))"
expect_contains "$(cat "$out")" "; not restarting: it failed within 30 s and no checkpoint was recorded by dtrain::Checkpointer (a program that saves its own records each save in \$DTRAIN_RUN_DIR/checkpoints.jsonl: docs/fault-tolerance.md), so the failure would repeat" "supervisor's line"
expect_one_attempt quick ended "rank 0 on "
echo "== the launch dies with its supervisor (the walltime's KILL reaches only the supervisor)"
# A launch that ignores SIGTERM, as one that hangs in its teardown does.
cat >stubborn.sh <<'SH'
trap '' TERM
touch "$(dirname "$0")/running-stubborn"
while :; do sleep 0.1; done
SH
rm -f running-*
"$DTRAIN" supervise --run-dir "$work/runs/stubborn" -- bash "$work/stubborn.sh" >stubborn.out 2>&1 &
pid=$!
out=stubborn.out
until_file running-stubborn
kill -KILL "$pid"
wait "$pid" || true
for ((i = 0; i < 100; i++)); do
  pgrep -f -- "$work/stubborn.sh" >/dev/null || break
  sleep 0.1
done
left=$(pgrep -af -- "$work/stubborn.sh" || true)
[[ -z $left ]] || fail "the launch outlived its killed supervisor by 10 s: $left"
echo PASS
