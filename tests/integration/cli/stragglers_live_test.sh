#!/usr/bin/env bash
# Stragglers without code change (issue 46 item 3; cli/arrival_watch.hpp, report/arrival_skew.hpp):
# an unmodified libdtrain program without the Meter (runtime_probe's training loop, 3 ranks on the
# local site, steps of a 40 ms sleep and a 4 KiB allreduce) whose rank 1 sleeps 1.25x as long is
# named by rank 0's logger while the job runs (submit's output and RUN_DIR/stragglers.log, before
# the 100th step), as off the CPU most of its time outside its collectives (its step is a sleep;
# rank_activity.hpp),
# and by `dtrain stats` and `dtrain report` afterwards; the same job without a
# slow rank names nobody.
#   stragglers_live_test.sh DTRAIN PROBE [RUNS]   (RUNS: each case this many times, the bench's 10)
set -euo pipefail
DTRAIN=$1 PROBE=$2 RUNS=${3:-1}
source "$(dirname "$0")/lib.sh"
enter_workdir stragglers-live
host=$(hostname)

job() { # NAME [ENV_LINES...]: 3 ranks of the probe's loop of 150 steps
  local name=$1 line
  shift
  {
    echo "name: $name"
    echo "ranks_per_node: 3"
    echo "command: [$(printf '%q' "$PROBE")]"
    echo "env:"
    echo "  RUNTIME_PROBE_STEPS: \"150\""
    echo "  RUNTIME_PROBE_STEP_MS: \"40\""
    for line in "$@"; do echo "  $line"; done
  } >"$name.yaml"
}

line_re="^dtrain: straggler: rank 1 on $host arrived last in [0-9.]+ % of the last [0-9]+ collectives, [0-9.]+ ms after the median: a straggler; it is off the CPU [0-9.]+ % of its time outside collectives, the others [0-9.]+ % \\(sleeping, loading data, or waiting for a lock or a CPU: not computing then\\); the others waited for it [0-9.]+ % of the time \\(it waited [0-9.]+ [mu]?s in them, the median of the others [0-9.]+ [mu]?s\\)$"

for ((run = 1; run <= RUNS; ++run)); do
  echo "== run $run: rank 1 sleeps 1.25x as long each step"
  rm -rf runs
  job slow 'RUNTIME_PROBE_SLOW_RANK: "1"'
  submit_expecting 0 slow.yaml "the job with a slow rank 1"
  grep -qE "$line_re" slow.out || fail "no live line naming rank 1 in: $(cat slow.out)"
  expect_eq 1 "$(grep -c '^dtrain: straggler:' slow.out)" "straggler lines (one per verdict change)"
  run_dir=$(ls -d runs/slow-*)
  [[ -s "$run_dir/stragglers.log" ]] || fail "no $run_dir/stragglers.log"
  named_at=$(grep -m1 ' dtrain: straggler: rank 1 ' "$run_dir/stragglers.log" | cut -d' ' -f1)
  step100_at=$(grep -m1 'runtime_probe: step 100$' "$run_dir/rank-00000.log" | cut -d' ' -f1)
  [[ -n "$named_at" && -n "$step100_at" ]] || fail "no times: [$named_at] [$step100_at]"
  [[ ! "$named_at" > "$step100_at" ]] ||
    fail "named at $named_at, after step 100 at $step100_at: $(cat "$run_dir/stragglers.log")"
  stats=$("$DTRAIN" stats "$run_dir")
  grep -qE "^  rank 1 on $host arrived last in [0-9.]+ % of the last 15[0-9] collectives" <<<"$stats" ||
    fail "stats names no rank 1: $stats"
  grep -qE "^arrivals at the collectives \(the last 15[0-9] of 3 ranks, matched by number\):$" <<<"$stats" ||
    fail "stats has no arrivals section: $stats"
  json=$("$DTRAIN" stats --json "$run_dir")
  expect_eq "true 1" "$(python3 -c 'import json,sys; a=json.load(sys.stdin)["arrivals"]; print(str(a["straggler"]).lower(), a["rank"])' <<<"$json")" "stats --json arrivals"
  "$DTRAIN" report "$run_dir" -o page.html >/dev/null
  grep -q "rank 1 on $host arrived last in" page.html || fail "the report page does not name rank 1"
  echo "ok: named before step 100 ($named_at <= $step100_at)"

  echo "== run $run: no slow rank"
  job clean
  submit_expecting 0 clean.yaml "the job without a slow rank"
  grep -q '^dtrain: straggler:' clean.out && fail "a straggler named in a clean run: $(cat clean.out)"
  run_dir=$(ls -d runs/clean-*)
  [[ ! -e "$run_dir/stragglers.log" ]] || fail "stragglers.log in a clean run: $(cat "$run_dir/stragglers.log")"
  stats=$("$DTRAIN" stats "$run_dir")
  grep -qE "^arrivals at the collectives \(the last 15[0-9] of 3 ranks, matched by number\): no straggler$" <<<"$stats" ||
    fail "stats does not say no straggler: $stats"
  echo "ok: nobody named"
done
