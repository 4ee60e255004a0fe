#!/usr/bin/env bash
# Stacks of every rank on a hang (issue 46 item 2; cli/stack_capture.hpp, report/stack_tree.hpp):
# an unmodified libdtrain program (runtime_probe) on the local site.
#  - 16 ranks, rank 11 stopped (SIGSTOP) outside the allreduce the other 15 wait in:
#    `dtrain stacks RUN_DIR` prints, within 10 s, the merged tree in which rank 11's branch stands
#    apart from ranks 0-10,12-15's, and leaves rank 11 stopped as it found it; a debugger that
#    never finishes is ended at --timeout.
#  - 4 ranks, rank 1 spinning, DTRAIN_HANG_AFTER=3: the hang watch takes the stacks of the node's
#    ranks into RUN_DIR/stacks/ before it ends rank 1, and `dtrain logs --hang` shows them merged.
#  - 2 Python ranks, one spinning and one stopped, each in a known function: their Python frames
#    (read from the interpreter's memory) are a branch "(Python)" of the tree, with each
#    function's name.
#  - bad input is refused by name.
#   stacks_test.sh DTRAIN PROBE
set -euo pipefail
DTRAIN=$1 PROBE=$2
source "$(dirname "$0")/lib.sh"
enter_workdir stacks

# job NAME RANKS ODD SIGNAL [ENV_LINES...]
job() {
  local name=$1 ranks=$2 odd=$3 signal=$4 line
  shift 4
  {
    echo "name: $name"
    echo "ranks_per_node: $ranks"
    echo "command: [$(printf '%q' "$PROBE")]"
    echo "env:"
    echo "  RUNTIME_PROBE_DIE_RANK: \"$odd\""
    echo "  RUNTIME_PROBE_SIGNAL: $signal"
    for line in "$@"; do echo "  $line"; done
  } >"$name.yaml"
}

# The state letter of a process (R, S, T, ...).
state_of() { sed -E 's/.*\) (.).*/\1/' "/proc/$1/stat"; }

echo "== 16 ranks, rank 11 stopped: dtrain stacks"
job hung 16 11 STOP 'DTRAIN_HANG_AFTER: "off"' 'DTRAIN_TIMEOUT: "120"'
"$DTRAIN" submit hung.yaml >hung.out 2>&1 &
submit_pid=$!
# Until rank 11 has stopped itself (after the barrier, so the others are in the allreduce).
pid11=
for _ in $(seq 1 600); do
  log=$(ls runs/hung-*/rank-00011.log 2>/dev/null || true)
  [[ -n "$log" ]] && pid11=$(sed -nE '1s/.*, pid ([0-9]+)\).*/\1/p' "$log")
  [[ -n "$pid11" && -e /proc/$pid11 && "$(state_of "$pid11")" == T ]] && break
  sleep 0.1
done
[[ -n "$pid11" && "$(state_of "$pid11")" == T ]] || fail "rank 11 did not stop: $(cat hung.out)"
sleep 1
run_dir=$(ls -d runs/hung-*)
start=$(date +%s.%N)
"$DTRAIN" stacks "$run_dir" >stacks.txt 2>&1 || fail "dtrain stacks failed: $(cat stacks.txt)"
took=$(echo "$(date +%s.%N) - $start" | bc)
cat stacks.txt
(($(echo "$took <= 10" | bc))) || fail "dtrain stacks took $took s (expected at most 10 s)"
out=$(cat stacks.txt)
expect_contains "$out" "dtrain stacks: $run_dir, attempt 1, ranks on $(hostname), taken in " "heading"
expect_contains "$out" "stacks of ranks 0-15, merged" "the ranks read"
# Under main, the 15 that wait in the allreduce are one branch and rank 11, stopped in raise(),
# another.
main_branch=$(sed -n '/^    main$/,$p' stacks.txt)
expect_contains "$main_branch" "
    ranks 0-10,12-15 (15):
      dtrain::Comm::allreduce(" "the waiting ranks' branch"
expect_contains "$main_branch" "
    rank 11:
      raise
" "rank 11's branch apart"
grep -q "^no stack" stacks.txt && fail "ranks without a stack: $out"
expect_eq T "$(state_of "$pid11")" "rank 11's state after dtrain stacks"
"$DTRAIN" stacks --json "$run_dir" >stacks.json
python3 - stacks.json <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ranks = {r["rank"]: r for r in j["ranks"]}
assert sorted(ranks) == list(range(16)), sorted(ranks)
assert any("raise" in t for t in ranks[11]["threads"]), ranks[11]
EOF
# Bounded: a debugger that never finishes (here a stand-in eu-stack that sleeps) is killed at
# --timeout, each rank says so, and nothing is left stopped.
mkdir stuck
# Its own duration, so that no other process's `sleep 300` on the machine is taken for it.
stuck_sleep="sleep 300.$$"
printf '#!/bin/sh\nexec %s\n' "$stuck_sleep" >stuck/eu-stack
chmod +x stuck/eu-stack
start=$(date +%s.%N)
status=0
PATH=$PWD/stuck:$PATH "$DTRAIN" stacks --timeout 1 "$run_dir" >stuck.txt 2>&1 || status=$?
stuck_took=$(echo "$(date +%s.%N) - $start" | bc)
expect_eq 1 "$status" "exit status with no stack read ($(cat stuck.txt))"
(($(echo "$stuck_took <= 5" | bc))) || fail "dtrain stacks --timeout 1 took $stuck_took s"
expect_contains "$(cat stuck.txt)" "no stacks of ranks 0-15: not taken within 1 s" "the stuck debugger"
pgrep -f "^$stuck_sleep$" >/dev/null && fail "the stuck debugger outlived dtrain stacks"
expect_eq T "$(state_of "$pid11")" "rank 11's state after the stuck debugger"
echo "ok: a stuck debugger ended after $stuck_took s"
kill -TERM "$submit_pid"
kill -CONT "$pid11" 2>/dev/null || true
wait "$submit_pid" || true
submit_pid=
echo "ok: merged in $took s"

echo "== Python ranks: their Python frames in the tree, stopped or running"
# Rank 0 spins in one known function, rank 1 stops itself (SIGSTOP) in another: both are read from
# the interpreter's memory (cli/python_stacks.hpp), without a debugger's Python support.
cat >stuck.py <<'EOF_PY'
import os, signal

def spinning_in_known_function():
    while True:
        pass

def stopped_in_known_function():
    print("stopping", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)

def main():
    if os.environ["DTRAIN_RANK"] == "0":
        spinning_in_known_function()
    stopped_in_known_function()

main()
EOF_PY
{
  echo "name: py"
  echo "ranks_per_node: 2"
  echo "command: [/usr/bin/python3, $PWD/stuck.py]"
  echo "env:"
  echo "  DTRAIN_HANG_AFTER: \"off\""
} >py.yaml
"$DTRAIN" submit py.yaml >py.out 2>&1 &
submit_pid=$!
pid1=
for _ in $(seq 1 300); do
  log=$(ls runs/py-*/rank-00001.log 2>/dev/null || true)
  [[ -n "$log" ]] && pid1=$(sed -nE '1s/.*, pid ([0-9]+)\).*/\1/p' "$log")
  [[ -n "$pid1" && -e /proc/$pid1 && "$(state_of "$pid1")" == T ]] && break
  sleep 0.1
done
[[ -n "$pid1" && "$(state_of "$pid1")" == T ]] || fail "python rank 1 did not stop: $(cat py.out)"
run_dir=$(ls -d runs/py-*)
start=$(date +%s.%N)
"$DTRAIN" stacks "$run_dir" >py-stacks.txt 2>&1 || fail "dtrain stacks failed: $(cat py-stacks.txt)"
took=$(echo "$(date +%s.%N) - $start" | bc)
cat py-stacks.txt
(($(echo "$took <= 10" | bc))) || fail "dtrain stacks of 2 Python ranks took $took s"
out=$(cat py-stacks.txt)
python_branch=$(sed -n '/^    (Python)$/,$p' py-stacks.txt)
expect_contains "$python_branch" "
    <module> (stuck.py)
    main (stuck.py)
" "the Python frames both ranks share"
expect_contains "$python_branch" "
    rank 0:
      spinning_in_known_function (stuck.py)" "the spinning rank's Python frame"
expect_contains "$python_branch" "
    rank 1:
      stopped_in_known_function (stuck.py)" "the stopped rank's Python frame"
expect_eq T "$(state_of "$pid1")" "python rank 1's state after dtrain stacks"
kill -TERM "$submit_pid"
kill -CONT "$pid1" 2>/dev/null || true
wait "$submit_pid" || true
submit_pid=
echo "ok: Python frames of both ranks in $took s"

echo "== the hang watch takes the stacks before it ends a spinning rank"
job spin 4 1 SPIN 'DTRAIN_HANG_AFTER: "3"'
submit_expecting 137 spin.yaml "a job whose spinning rank 1 the watch ended"
run_dir=$(ls -d runs/spin-*)
expect_contains "$(cat spin.out)" "dtrain: hang: the stacks of ranks 0-3 on $(hostname) are in $PWD/$run_dir/stacks (dtrain logs --hang $PWD/$run_dir shows them merged)" "the watch's line"
expect_eq "rank-00000.json rank-00001.json rank-00002.json rank-00003.json" "$(ls "$run_dir/stacks" | xargs)" "files in $run_dir/stacks"
"$DTRAIN" logs --hang "$run_dir" >hang.txt
cat hang.txt
out=$(cat hang.txt)
expect_contains "$out" "the hang watch's stacks ($run_dir/stacks, taken " "heading"
expect_contains "$out" "stacks of ranks 0-3, merged" "the ranks"
# Rank 1 spins in main itself while the others went on into the allreduce.
expect_contains "$out" "
    rank 1:
      (in main itself)" "rank 1's branch"
"$DTRAIN" logs --hang --json "$run_dir" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert sorted(s["rank"] for s in j["stacks"]) == [0, 1, 2, 3], j.get("stacks")'
echo ok

echo "== bad input is refused by name"
expect_status_and_message 2 "expected a run directory" "$DTRAIN" stacks "$work/nothing"
mkdir empty
expect_status_and_message 2 "rank logs: has the job started?" "$DTRAIN" stacks empty
expect_status_and_message 2 "--timeout" "$DTRAIN" stacks --timeout 0 empty
echo '{"rank": "one"}' >"$run_dir/stacks/rank-00001.json"
expect_status_and_message 2 "dtrain: $run_dir/stacks/rank-00001.json: \"rank\": expected a whole number" "$DTRAIN" logs --hang "$run_dir"
echo PASS
