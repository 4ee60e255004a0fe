#!/usr/bin/env bash
# Restarts on the local site (docs/fault-tolerance.md), with the Fashion-MNIST example shortened to
# 80 steps on 2 ranks: rank 1 crashes after step 50 in the first attempt (--fail-at-step); with
# `restarts: 2` the job restarts, resumes from the step-40 checkpoint and ends with the very model
# of an undisturbed run (the final checkpoint's bytes); attempts.jsonl and the merged log show the
# two attempts. A command that fails at start ends the job after one attempt with its own error,
# and the scheduler's checkpoint signal still stops the job for a requeue without a restart.
set -euo pipefail
DTRAIN=$1 TRAIN=$2 SRC=$3
source "$SRC/tests/integration/cli/lib.sh"
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-restarts-test.XXXXXX")
submit_pid=
cleanup() {
  [[ -n "$submit_pid" ]] && kill "$submit_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
cp "$SRC/examples/fashion-mnist/job.yaml" job.yaml
# A record per step (docs/metrics.md, "Detail"): the redone steps below are counted from them.
printf 'env:\n  DTRAIN_RECORDS: steps\n' >> job.yaml

command_for() {  # words... -> a YAML flow list
  local out="[$TRAIN"
  for w in "$@"; do out+=", \"$w\""; done
  echo "$out]"
}
losses() { sed -n 's/^step \([0-9]*\) loss \([0-9.]*\) .*/\1 \2/p' <<< "$1"; }
new_run_dir() { ls -d "$work"/runs/fashion-mnist-* | sort | tail -1; }

short=(--epochs 1 --steps-per-epoch 80 --warmup-steps 20 --log-every 1 --checkpoint-every 20)

echo "== undisturbed run"
out=$("$DTRAIN" submit job.yaml --set "command=$(command_for "${short[@]}")" 2>&1) ||
  fail "undisturbed run exited $?: $out"
full=$(losses "$out")
full_final=$(grep '^final test accuracy' <<< "$out")
expect_eq 80 "$(wc -l <<< "$full")" "loss lines of the undisturbed run"
mv "$(new_run_dir)" "$work/runs/full"
[[ ! -e "$work/runs/full/attempts.jsonl" ]] || fail "a job without restarts wrote attempts.jsonl"

echo "== rank 1 crashes after step 50 in attempt 0; restarts: 2"
set +e
out=$("$DTRAIN" submit job.yaml --set restarts=2 --set restart_backoff=0 \
  --set "command=$(command_for "${short[@]}" --fail-at-step 50 --fail-rank 1)" 2>&1)
status=$?
set -e
echo "$out" | grep -E '^dtrain: |^resumed' || true
expect_eq 0 "$status" "exit status of the restarted job ($out)"
run=$(new_run_dir)
expect_contains "$out" "dtrain: attempt 1 of 3 failed: rank 1 on " "restart line"
expect_contains "$out" "exited with status 3: dtrain-fashion-mnist: error: injected failure after step 50 on rank 1 (--fail-at-step, attempt 0); restarting in 0 s" "restart line"
expect_contains "$out" "resumed from $run/checkpoints/ckpt-000000000040 at epoch 1, step 40" "resume line"
expect_contains "$out" "dtrain: attempt 2 of 3 completed" "completion line"
expect_contains "$out" "dtrain: job " "end line"
expect_contains "$out" " completed (exit status 0)" "end line"

# The first attempt printed steps 1-50, the second 41-80: both agree with the undisturbed run.
got=$(losses "$out")
expect_eq "$(head -50 <<< "$full")" "$(head -50 <<< "$got")" "steps 1-50 of attempt 0"
expect_eq "$(tail -40 <<< "$full")" "$(tail -n +51 <<< "$got")" "steps 41-80 of attempt 1"
expect_eq "$full_final" "$(grep '^final test accuracy' <<< "$out")" "final accuracy"
cmp "$work/runs/full/checkpoints/ckpt-000000000080" "$run/checkpoints/ckpt-000000000080" ||
  fail "the final model (checkpoint of step 80) differs from the undisturbed run's"

python3 - "$run/attempts.jsonl" "$(hostname)" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, f"expected 2 attempt records, got {len(lines)}: {lines}"
a0, a1 = (json.loads(l) for l in lines)
assert a0["v"] == 1 and a0["attempt"] == 0 and a1["attempt"] == 1, lines
assert a0["outcome"] == "restarted" and a0["status"] != 0, a0
assert a0["cause"].startswith("rank 1 on ") and "injected failure after step 50" in a0["cause"], a0
assert a0["checkpoints"] == 2 and a1["checkpoints"] == 2, (a0, a1)  # steps 20, 40; 60, 80
assert a1["outcome"] == "completed" and a1["status"] == 0 and a1["cause"] == "", a1
for a in (a0, a1):
    assert a["ranks"] == 2 and a["nodes"] == [sys.argv[2]], a
    assert a["start"] <= a["end"], a
assert a0["end"] <= a1["start"], (a0, a1)
print("attempts.jsonl:", a0["outcome"], a0["cause"][:60], "/", a1["outcome"])
PY
steps=$(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["step"]) for l in open(sys.argv[1])))' "$run/checkpoints.jsonl")
expect_eq "20 40 60 80" "$steps" "steps in checkpoints.jsonl"

merged=$("$DTRAIN" logs "$run" 2>&1) || fail "dtrain logs exited $?: $merged"
for r in 0 1; do
  expect_eq 1 "$(grep -c "dtrain: rank $r of 2 started on .*, pid [0-9]*): " <<< "$merged")" "attempt 0 start line of rank $r"
  expect_eq 1 "$(grep -c "dtrain: rank $r of 2 started on .*, pid [0-9]*, attempt 1): " <<< "$merged")" "attempt 1 start line of rank $r"
done

report=$("$DTRAIN" logs --first-error "$run" 2>&1) || fail "dtrain logs --first-error exited $?: $report"
expect_contains "$report" "attempt 2 of the job (completed): the report below covers its lines only" "first-error report"
expect_contains "$report" "  attempt 1 restarted at " "first-error report"
expect_contains "$report" "no rank failed: 2 of 2 ranks exited with status 0" "first-error report"
# The job recovered: the report of its last attempt says which attempt failed first, and
# --attempt 1 reports that one, naming the later attempt.
expect_contains "$report" "attempt 1 failed first; its report: dtrain logs --first-error --attempt 1 $run" "first-error report"
earlier=$("$DTRAIN" logs --first-error --attempt 1 "$run" 2>&1) ||
  fail "dtrain logs --first-error --attempt 1 exited $?: $earlier"
expect_contains "$earlier" "attempt 1 of the job (restarted): the report below covers its lines only" "attempt 1 report"
expect_contains "$earlier" "  later: attempt 2 completed at " "attempt 1 report"
expect_contains "$earlier" "first failure: rank 1 on " "attempt 1 report"
expect_contains "$earlier" "injected failure after step 50 on rank 1" "attempt 1 report"
expect_status_and_message 2 "dtrain: logs: --attempt 3: $run has attempts 1 to 2; expected one of them" \
  "$DTRAIN" logs --first-error --attempt 3 "$run"

# dtrain stats: the two attempts and the time lost (checkpoint of step 40 to the crash, crash to
# attempt 1's first step); steps 40-49 of attempt 0, redone, are counted once: 80 steps per rank.
grep -q '"attempt":1' "$run/rank-00001.jsonl" || fail "no metric record of attempt 1 carries \"attempt\":1"
grep -q '"attempt":0' "$run/rank-00001.jsonl" && fail "a metric record of attempt 0 carries \"attempt\""
stats=$("$DTRAIN" stats "$run" 2>&1) || fail "dtrain stats exited $?: $stats"
echo "$stats" | grep -E '^attempts|^  attempt|step records' || true
expect_contains "$stats" "attempts: 2 (1 failed and restarted); time lost to failures: " "stats lost-time line"
expect_contains "$stats" "  attempt 1 failed at " "stats failed-attempt line"
expect_contains "$stats" "since the checkpoint of step 40, " "stats failed-attempt line"
"$DTRAIN" stats --json "$run" > "$work/stats.json" || fail "dtrain stats --json exited $?"
"$DTRAIN" stats --json "$work/runs/full" > "$work/stats-full.json" || fail "dtrain stats --json (undisturbed) exited $?"
python3 - "$work/stats.json" "$work/stats-full.json" <<'PY'
import json, sys
s, full = (json.load(open(p)) for p in sys.argv[1:])
assert [r["steps"] for r in s["ranks"]] == [80, 80], s["ranks"]
assert [r["samples"] for r in s["ranks"]] == [r["samples"] for r in full["ranks"]], (s["ranks"], full["ranks"])
f = s["failures"]
assert f["attempts"] == 2 and len(f["failed"]) == 1, f
a = f["failed"][0]
assert a["attempt"] == 0 and a["checkpoint_step"] == 40, a
assert a["redone_seconds"] > 0 and a["restart_seconds"] > 0, a
assert abs(f["lost_seconds"] - a["redone_seconds"] - a["restart_seconds"]) < 1e-6, f
# At most steps 40-49 of both ranks: a rank that crashes loses its last unflushed records.
assert 0 < f["redone_step_records"] <= 20, f
assert full["failures"] is None, full["failures"]
print("stats: lost %.2f s (%.2f redone, %.2f restart), %d redone step records" % (
    f["lost_seconds"], a["redone_seconds"], a["restart_seconds"], f["redone_step_records"]))
PY

echo "== a command that fails at start ends the job after one attempt with its own error"
set +e
out=$("$DTRAIN" submit job.yaml --set restarts=2 --set restart_backoff=0 \
  --set "command=$(command_for --data "$work/no-data" --epochs 1)" 2>&1)
status=$?
set -e
run=$(new_run_dir)
expect_eq 1 "$status" "exit status of the failing job ($out)"
expect_contains "$out" "dtrain-fashion-mnist: $work/no-data" "the program's own error"
# Both ranks fail alike (no data): one is named with the same error, or the launcher ended the
# other before it printed.
grep -qE "^dtrain: attempt 1 of 3 failed: (rank [01]|ranks [01], [01] failed on their own with the same error; rank [01]) on [^ ]+ (first )?exited with status 1: dtrain-fashion-mnist: $work/no-data" <<<"$out" ||
  fail "end line: expected rank 0 or 1 (or both, alike) named with the program's error, got [$out]"
expect_contains "$out" "; not restarting: it failed within 30 s and no checkpoint was recorded by dtrain::Checkpointer (a program that saves its own records each save in \$DTRAIN_RUN_DIR/checkpoints.jsonl: docs/fault-tolerance.md), so the failure would repeat" "end line"
expect_eq 1 "$(wc -l < "$run/attempts.jsonl")" "attempt records of the failing job"
grep -q '"outcome":"ended"' "$run/attempts.jsonl" || fail "expected outcome ended: $(cat "$run/attempts.jsonl")"
expect_eq 1 "$(grep -c 'started on' "$run/rank-00000.log")" "start lines in rank 0's log"
report=$("$DTRAIN" logs --first-error "$run" 2>&1) || fail "dtrain logs --first-error exited $?: $report"
expect_contains "$report" "attempt 1 of the job (ended): the report below covers its lines only" "first-error report"
expect_contains "$report" "dtrain-fashion-mnist: $work/no-data" "first-error report"

echo "== SIGUSR1 stops a job with restarts for a requeue, without a restart"
echo "restarts: 2" >> job.yaml
long=(--epochs 2 --steps-per-epoch 150 --warmup-steps 20 --log-every 1)
submit_and_preempt "$work" "$(command_for "${long[@]}")" stopped.txt
expect_eq 85 "$status" "exit status of the signalled run (85 asks for a requeue): $stopped"
expect_contains "$stopped" "dtrain: attempt 1 of 3 stopped by SIGUSR1; the ranks asked for a requeue; not restarting" "stop line"
expect_eq 1 "$(wc -l < "$run_dir/attempts.jsonl")" "attempt records of the signalled job"
grep -q '"outcome":"stopped"' "$run_dir/attempts.jsonl" || fail "expected outcome stopped: $(cat "$run_dir/attempts.jsonl")"
echo "restarts: restarted after a crash to the undisturbed model; no restart after a failure at start or a preemption"
