#!/usr/bin/env bash
# bench/gen_run_dir's run directory (the readers' benchmark at scale, issue 47) at a small size,
# read by the real readers: what it writes is what the readers take, at both details, and says
# what the generator means it to (rank 1 the straggler, rank N/3 failed first and never entered
# the last allreduce). Then the readers' parallel reading: the same bytes as on one CPU (taskset),
# where they read the files one after the other; and a bad line in a middle file refused naming
# that line, as on one CPU.
#   gen_run_dir_test.sh DTRAIN GEN_RUN_DIR
set -euo pipefail
DTRAIN=$1 GEN=$2
source "$(dirname "$0")/lib.sh"
enter_workdir gen-run-dir-test
ranks=12 steps=1000 culprit=4 last=999

"$GEN" "$work/agg" $ranks $steps
"$GEN" "$work/full" $ranks $steps steps
agg_bytes=$(cat "$work"/agg/rank-00000.jsonl | wc -c)
full_bytes=$(cat "$work"/full/rank-00000.jsonl | wc -c)
echo "rank 0's records: $agg_bytes bytes at the default detail, $full_bytes at full detail"
((agg_bytes * 5 < full_bytes)) || fail "expected the default detail far smaller: $agg_bytes vs $full_bytes"
expect_eq 0 "$(grep -c '"type":"interval"' "$work/full/rank-00000.jsonl" || true)" "interval records at full detail"
expect_eq $((steps - 1)) "$(grep -c '"type":"step"' "$work/full/rank-00000.jsonl")" "step records at full detail"

for d in agg full; do
  "$DTRAIN" stats --json "$work/$d" > "$work/$d.json"
  out=$("$DTRAIN" stats "$work/$d")
  expect_contains "$out" "rank 1 on node0: " "$d: the straggler"
  fe=$("$DTRAIN" logs --first-error "$work/$d" || true)
  expect_contains "$fe" "first failure: rank $culprit on node1 exited with status 1" "$d: --first-error"
  expect_contains "$fe" "error: CUDA out of memory on rank $culprit" "$d: the error line"
  hang=$("$DTRAIN" logs --hang "$work/$d" || true)
  expect_contains "$hang" "hang: rank $culprit never entered collective #$last (allreduce of 4194304 bytes) that ranks 0-3,5-11 reached" "$d: --hang"
  "$DTRAIN" timeline "$work/$d" -o "$work/$d-trace.json" > /dev/null
  "$DTRAIN" report "$work/$d" -o "$work/$d.html" > /dev/null
done
# Every figure of the aggregated run within 1 % of the full detail's, every rank counted whole.
python3 - "$work/agg.json" "$work/full.json" $ranks $((steps - 1)) <<'PY'
import json, sys
agg, full, n, steps = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]), int(sys.argv[4])
a, f = agg["runs"][0] if "runs" in agg else agg, full["runs"][0] if "runs" in full else full
assert len(a["ranks"]) == n, len(a["ranks"])
for ra, rf in zip(a["ranks"], f["ranks"]):
    assert ra["steps"] == rf["steps"] == steps, (ra["steps"], rf["steps"])
    for k in ("samples", "seconds", "p50_step_seconds", "p95_step_seconds", "comm_share"):
        assert abs(ra[k] - rf[k]) <= 0.01 * abs(rf[k]), (ra["rank"], k, ra[k], rf[k])
PY

echo "== in parallel, the same bytes as one thread reading the files in turn"
for d in agg full; do
  for cmd in "stats --json" "logs --hang" "logs --first-error"; do
    # shellcheck disable=SC2086
    a=$("$DTRAIN" $cmd "$work/$d" 2>&1 || true)
    # shellcheck disable=SC2086
    b=$(taskset -c 0 "$DTRAIN" $cmd "$work/$d" 2>&1 || true)
    expect_eq "$b" "$a" "$d: $cmd on every CPU and on one"
  done
  "$DTRAIN" timeline "$work/$d" -o "$work/one.json" > /dev/null
  taskset -c 0 "$DTRAIN" timeline "$work/$d" -o "$work/two.json" > /dev/null
  cmp "$work/one.json" "$work/two.json" || fail "$d: timeline differs on one CPU"
done

echo "== a bad line in a middle file: refused naming it, the same on one CPU"
sed -i '30s/"type":"[a-z]*"/"type":"nonsense"/' "$work/full/rank-00007.jsonl"
a=$("$DTRAIN" stats "$work/full" 2>&1 && echo "exit 0" || echo "exit $?")
b=$(taskset -c 0 "$DTRAIN" stats "$work/full" 2>&1 && echo "exit 0" || echo "exit $?")
expect_contains "$a" "dtrain: $work/full/rank-00007.jsonl:30: field \"type\"" "the bad line named"
expect_contains "$a" "exit 2" "exit status of a bad record"
expect_eq "$b" "$a" "the error on every CPU and on one"
echo PASS
