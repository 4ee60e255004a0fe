#!/usr/bin/env bash
# The live hang watch (issue 46 item 1; cli/live_watch.hpp): an unmodified libdtrain program on
# the local site (runtime_probe, 3 ranks) whose rank 1 stops (SIGSTOP) or spins outside any
# collective while the others wait in an allreduce. Each rank's logger names the rank, its host,
# what it is doing and what the others wait in, in `dtrain submit`'s output and RUN_DIR/hang.log,
# and ends it (DTRAIN_ON_HANG=abort) so that the job ends: with the default DTRAIN_HANG_AFTER (30 s)
# the stopped rank is named within 45 s and the job ends within 60 s, far below DTRAIN_TIMEOUT
# (300 s). DTRAIN_ON_HANG=wait only names it; DTRAIN_HANG_AFTER=off says nothing; bad values are
# refused by name.
#   hang_watch_test.sh DTRAIN PROBE
set -euo pipefail
DTRAIN=$1 PROBE=$2
source "$(dirname "$0")/lib.sh"
enter_workdir hang-watch

# job NAME SIGNAL [ENV_LINES...]: a spec of 3 ranks of the probe, rank 1 given SIGNAL.
job() {
  local name=$1 signal=$2 line
  shift 2
  {
    echo "name: $name"
    echo "ranks_per_node: 3"
    echo "command: [$(printf '%q' "$PROBE")]"
    echo "env:"
    echo "  RUNTIME_PROBE_DIE_RANK: \"1\""
    echo "  RUNTIME_PROBE_SIGNAL: $signal"
    for line in "$@"; do echo "  $line"; done
  } >"$name.yaml"
}

verdict_re() { # STATE: the line a logger writes for rank 1
  echo "^dtrain: hang: rank 1 \\(on $(hostname)\\) is $1, outside any collective \\(it left barrier #0 [0-9]+ s ago\\); ranks 0,2 wait in allreduce #1 of 4096 bytes for [0-9]+ s; DTRAIN_ON_HANG="
}

echo "== rank 1 stopped (SIGSTOP), the default DTRAIN_HANG_AFTER (30 s) and DTRAIN_TIMEOUT (300 s)"
job stopped STOP
start=$SECONDS
submit_expecting 137 stopped.yaml "a job whose stopped rank 1 the watch ended"
took=$((SECONDS - start))
grep -qE "$(verdict_re 'stopped \(SIGSTOP\)')abort: ending rank 1$" stopped.out ||
  fail "no verdict on rank 1 in: $(cat stopped.out)"
((took <= 60)) || fail "the job took $took s to end (expected at most 60 s): $(cat stopped.out)"
((took >= 30)) || fail "the job ended after $took s, before DTRAIN_HANG_AFTER's 30 s: $(cat stopped.out)"
run_dir=$(ls -d runs/stopped-*)
expect_eq 1 "$(grep -c ' dtrain: hang: rank 1 ' "$run_dir/hang.log")" "verdicts in $run_dir/hang.log"
[[ -z "$(ls -A "$run_dir/live")" ]] || fail "waits left in $run_dir/live: $(ls "$run_dir/live")"
# The summary after the job quotes the watch beside the rank's exit.
expect_contains "$(cat stopped.out)" "dtrain: first failure: rank 1 on $(hostname) was killed by signal 9 (SIGKILL)" "summary"
grep -qE "^dtrain: the hang watch's last verdict \(.*/hang.log\): hang: rank 1 \(on $(hostname)\) is stopped \(SIGSTOP\)" stopped.out ||
  fail "no quoted verdict in the summary: $(cat stopped.out)"
echo "ok: named and ended after $took s"

echo "== rank 1 spinning outside any collective, DTRAIN_HANG_AFTER=4"
job spinning SPIN 'DTRAIN_HANG_AFTER: "4"'
start=$SECONDS
submit_expecting 137 spinning.yaml "a job whose spinning rank 1 the watch ended"
grep -qE "$(verdict_re 'running, [0-9]+ % CPU')abort: ending rank 1$" spinning.out ||
  fail "no verdict on rank 1 in: $(cat spinning.out)"
((SECONDS - start <= 30)) || fail "the job took $((SECONDS - start)) s to end: $(cat spinning.out)"
echo "ok: named running and ended"

echo "== DTRAIN_ON_HANG=wait: named, and the job goes on to DTRAIN_TIMEOUT"
job waiting STOP 'DTRAIN_HANG_AFTER: "3"' 'DTRAIN_ON_HANG: wait' 'DTRAIN_TIMEOUT: "12"'
submit_expecting 1 waiting.yaml "a job whose rank 1 stayed stopped until the deadline"
grep -qE "$(verdict_re 'stopped \(SIGSTOP\)')wait: the job goes on$" waiting.out ||
  fail "no verdict on rank 1 in: $(cat waiting.out)"
expect_contains "$(cat waiting.out)" "not complete after 12 s" "the deadline error after the verdict"
echo "ok"

echo "== DTRAIN_HANG_AFTER=off: no watch"
job off STOP 'DTRAIN_HANG_AFTER: "off"' 'DTRAIN_TIMEOUT: "6"'
submit_expecting 1 off.yaml "a job ended by its deadline alone"
grep -q "dtrain: hang:" off.out && fail "a verdict with the watch off: $(cat off.out)"
[[ ! -e "$(ls -d runs/off-*)/hang.log" ]] || fail "hang.log written with the watch off"
echo "ok"

echo "== bad values are refused by name"
job bad STOP 'DTRAIN_HANG_AFTER: "soon"'
submit_expecting 2 bad.yaml "a job with DTRAIN_HANG_AFTER=soon"
expect_contains "$(cat bad.out)" 'env.DTRAIN_HANG_AFTER: expected a duration like 30s or 2m' "message"
expect_contains "$(cat bad.out)" 'got "soon"' "message"
job bad2 STOP 'DTRAIN_ON_HANG: kill'
submit_expecting 2 bad2.yaml "a job with DTRAIN_ON_HANG=kill"
expect_contains "$(cat bad2.out)" 'env.DTRAIN_ON_HANG: expected abort' "message"
echo PASS
