#!/usr/bin/env bash
# srun --dtrain-run-dir writes the run directory `dtrain run-rank` writes (records/output_tee.hpp):
# each rank log is framed by the start line (rank, host, command) and the exit line, so the
# readers work on plugin runs as they do on run-rank runs (tests/integration/cli/logs_test.sh):
# `dtrain logs --first-error` names the failed rank and its message, the merged log has
# `[rank@host]` prefixes and `dtrain stats` knows each rank's host (which its per-node rows group
# by; the fixture is one node, so the rows themselves need the multinode cluster).
#
# Usage: run_dir_records_test.sh DTRAIN DTRAIN_PI    (source the cluster's env.sh first)
set -euo pipefail
DTRAIN=$1
PI=$2
source "$(dirname "$0")/../cli/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-spank-records-XXXXXX")
trap 'rm -rf "$work"' EXIT
host=$(hostname)
run=$work/run
ts_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z'

echo "== a 2-rank srun --dtrain-run-dir job in which rank 1 fails after its metric records"
rc=0
# shellcheck disable=SC2016
timeout 120 srun --dtrain --dtrain-run-dir="$run" -n 2 bash -c \
  '"$0" --steps 4 --samples 20000 || exit; if [ "$SLURM_PROCID" = 1 ]; then echo "rank 1: cannot read shard 7" >&2; exit 4; fi; echo "rank 0 done"' \
  "$PI" >"$work/out" 2>"$work/err" || rc=$?
expect_eq 4 "$rc" "srun's exit status ($(cat "$work/err"))"
for r in 0 1; do
  log=$run/rank-0000$r.log
  [[ -f $log && -f $run/rank-0000$r.jsonl ]] || fail "rank $r: no log or metric file in $(ls "$run")"
  expect_contains "$(head -1 "$log")" " dtrain: rank $r of 2 started on $host (local rank $r of 2, pid " \
    "rank $r's start line"
  [[ $(head -1 "$log") == *"): bash -c "*" $PI" ]] || fail "rank $r's start line lacks the command: $(head -1 "$log")"
done
expect_contains "$(tail -1 "$run/rank-00000.log")" " dtrain: rank 0 exited with status 0" "rank 0's exit line"
expect_contains "$(tail -1 "$run/rank-00001.log")" " dtrain: rank 1 exited with status 4" "rank 1's exit line"

echo "== dtrain logs --first-error"
report=$("$DTRAIN" logs --first-error "$run")
echo "$report"
expect_contains "$report" "first failure: rank 1 on $host exited with status 4" "--first-error"
expect_contains "$report" "culprit: exited first" "--first-error"
expect_contains "$report" "rank 1: cannot read shard 7" "--first-error shows the culprit's last lines"

echo "== dtrain logs: [rank@host] prefixes"
merged=$("$DTRAIN" logs "$run")
expect_eq "$(cat "$run"/rank-*.log | wc -l)" "$(wc -l <<<"$merged")" "merged line count"
while IFS= read -r line; do
  [[ $line =~ $ts_re\ \[[01]@$host\]\  ]] || fail "expected '<time> [rank@$host] ' on every line, got [$line]"
done <<<"$merged"
expect_contains "$merged" "[0@$host] rank 0 done" "rank 0's output in the merge"

echo "== dtrain stats: each rank's host"
stats=$("$DTRAIN" stats --json "$run")
python3 - "$stats" "$host" <<'PY'
import json, sys
s, host = json.loads(sys.argv[1]), sys.argv[2]
assert [r["rank"] for r in s["ranks"]] == [0, 1], s["ranks"]
assert all(r["host"] == host for r in s["ranks"]), s["ranks"]
assert all(r["steps"] == 4 for r in s["ranks"]), s["ranks"]
PY
expect_contains "$("$DTRAIN" stats "$run")" "$host" "the stats table names the host"
echo "ok: srun --dtrain-run-dir run directories read like run-rank's"
