#!/usr/bin/env bash
# The spec's run settings reach the ranks of a local `dtrain submit` (docs/spec.md: records:,
# hang_after:, on_hang:): `records: steps` makes the pi example's Meter write a step record per
# step (the default writes the first 20 and then intervals); `hang_after: 3s` with `on_hang: wait`
# makes each rank's logger name a stopped rank after 3 s of waiting, not the default 30, and let
# the job go on to DTRAIN_TIMEOUT; `dtrain run`'s --records and --hang-after are the same fields.
#   spec_run_settings_test.sh DTRAIN PI PROBE
set -euo pipefail
DTRAIN=$1 PI=$2 PROBE=$3
source "$(dirname "$0")/lib.sh"
enter_workdir spec-run-settings

steps=45
pi_job() {  # NAME [FIELD_LINES...]
  local name=$1 line
  shift
  {
    echo "name: $name"
    echo "ranks_per_node: 2"
    echo "command: [$(printf '%q' "$PI"), --samples, \"400000\", --steps, \"$steps\"]"
    for line in "$@"; do echo "$line"; done
  } >"$name.yaml"
}
step_records() {  # NAME: rank 1's step records
  grep -c '"type":"step"' "$(ls -d runs/"$1"-*)/rank-00001.jsonl" || true
}

echo "== records: steps writes a step record per step; the default does not"
pi_job full 'records: steps'
submit_expecting 0 full.yaml "the pi example with records: steps"
expect_eq "$steps" "$(step_records full)" "rank 1's step records with records: steps"
pi_job default
submit_expecting 0 default.yaml "the pi example at the default records"
n=$(step_records default)
((n < steps)) || fail "rank 1 wrote $n step records of $steps at the default (expected intervals)"
grep -q '"type":"interval"' "$(ls -d runs/default-*)/rank-00001.jsonl" ||
  fail "no interval record at the default"
echo "ok: $steps step records with records: steps, $n at the default"

echo "== hang_after: 3s and on_hang: wait name a stopped rank after 3 s and let the job go on"
{
  echo "name: waiting"
  echo "ranks_per_node: 3"
  echo "command: [$(printf '%q' "$PROBE")]"
  echo "hang_after: 3s"
  echo "on_hang: wait"
  echo "env: {RUNTIME_PROBE_DIE_RANK: \"1\", RUNTIME_PROBE_SIGNAL: STOP, DTRAIN_TIMEOUT: \"12\"}"
} >waiting.yaml
submit_expecting 1 waiting.yaml "a job whose rank 1 stayed stopped until DTRAIN_TIMEOUT"
verdict=$(grep -E "^dtrain: hang: rank 1 \\(on $(hostname)\\) is stopped \\(SIGSTOP\\)" waiting.out) ||
  fail "no verdict on rank 1 in: $(cat waiting.out)"
expect_contains "$verdict" "DTRAIN_ON_HANG=wait: the job goes on" "the verdict (on_hang: wait)"
# The others had waited hang_after (3 s) when the watch read their waits (every 2 s): well under
# the default 30 s.
waited=$(sed -nE 's/.* wait in allreduce #1 of 4096 bytes for ([0-9]+) s;.*/\1/p' <<<"$verdict")
[[ -n "$waited" ]] && ((waited >= 3 && waited < 30)) ||
  fail "expected the verdict after 3 to 29 s of waiting (hang_after: 3s), got: $verdict"
expect_contains "$(cat waiting.out)" "not complete after 12 s" "the deadline after the verdict"
echo "ok: named after ${waited} s of waiting"

echo "== dtrain run --records steps --hang-after 2m --on-hang wait"
script=$("$DTRAIN" run -n 2 --records steps --hang-after 2m --on-hang wait --dry-run "$PI")
for line in "export DTRAIN_RECORDS=steps" "export DTRAIN_HANG_AFTER=120" "export DTRAIN_ON_HANG=wait"; do
  expect_contains "$script" "$line" "dtrain run --dry-run"
done
expect_status_and_message 2 \
  '--hang-after soon: hang_after: expected a duration like 30s or 2m' \
  "$DTRAIN" run -n 2 --hang-after soon --dry-run "$PI"
echo PASS
