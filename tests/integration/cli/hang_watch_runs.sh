#!/usr/bin/env bash
# The hang watch's benchmark of runs (issue 46, "Done when": 20 runs each, 0 wrong names): a rank
# SIGSTOPped mid-training, and a rank spinning in a busy loop outside collectives, RUNS times each,
# on the local site with the defaults (DTRAIN_HANG_AFTER 30 s, DTRAIN_ON_HANG abort), for
#  - probe: an unmodified libdtrain program (runtime_probe's training loop, 3 ranks, steps of 20 ms
#    and a 4 KiB allreduce): rank 1 stops or spins before step 100's allreduce
#    (RUNTIME_PROBE_DIE_STEP), and its log line's time is when the hang began;
#  - torch: an unmodified torch DDP program on backend="dtrain" (examples/pytorch-ddp, 2 ranks):
#    once rank 0 logged step 50, rank 1's Python process is sent SIGSTOP, or SIGUSR2, which
#    spin_on_usr2.py (the program run unchanged under runpy) answers with a busy loop in Python.
# Each run must name rank 1 with its state ("stopped (SIGSTOP)", "running, N % CPU") within 45 s of
# the hang's start, end the job within 60 s, and name no other rank or state (a wrong name); the
# tally of each case is printed, and any miss fails the test after all runs.
#   hang_watch_runs.sh DTRAIN PROBE SRC BUILD PROGRAM RUNS   (PROGRAM: probe or torch;
#   DTRAIN_HANG_CASES: the cases, else "stop spin"; DTRAIN_HANG_KEEP: a directory to copy the run
#   directory of each missed run into)
set -euo pipefail
DTRAIN=$1 PROBE=$2 SRC=$3 BUILD=$4 PROGRAM=$5 RUNS=$6
source "$SRC/tests/integration/cli/lib.sh"
read -ra CASES <<<"${DTRAIN_HANG_CASES:-stop spin}"
for case in "${CASES[@]}"; do
  [[ $case =~ ^(stop|spin)$ ]] || fail "DTRAIN_HANG_CASES: expected stop or spin, got \"$case\""
done
enter_workdir "hang-watch-runs-$PROGRAM"
host=$(hostname)

now() { date +%s.%N; }
# Seconds from A to B, one decimal.
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# A log line's time (its first field) as seconds since the epoch.
line_time() { date -d "$1" +%s.%N; }
within() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

spec() { # NAME SIGNAL: the job's spec in NAME.yaml
  if [[ $PROGRAM == probe ]]; then
    {
      echo "name: $1"
      echo "ranks_per_node: 3"
      echo "command: [$(printf '%q' "$PROBE")]"
      echo "env:"
      echo "  RUNTIME_PROBE_STEPS: \"100000\""
      echo "  RUNTIME_PROBE_STEP_MS: \"20\""
      echo "  RUNTIME_PROBE_DIE_RANK: \"1\""
      echo "  RUNTIME_PROBE_DIE_STEP: \"100\""
      echo "  RUNTIME_PROBE_SIGNAL: $2"
    } >"$1.yaml"
  else
    example_job_yaml "$SRC" "$BUILD" pytorch-ddp
    sed "s/^name: .*/name: $1/" job.yaml >"$1.yaml"
    local command
    command=$(yaml_command "/usr/bin/python3, $SRC/tests/integration/python/spin_on_usr2.py, $SRC/examples/pytorch-ddp/train.py" \
      --epochs 20 --log-every 10 --no-checkpoint --backend dtrain)
    sed -i "s|^command: .*|command: $command|" "$1.yaml"
  fi
}

# one_run NAME SIGNAL STATE_RE: prints "named ended wrong" (seconds from the hang's start; "-"
# when it did not happen) and the verdict lines into NAME.verdicts.
one_run() {
  local name=$1 signal=$2 state_re=$3 began="" named="" log="" pid="" line submit_pid
  rm -rf runs
  spec "$name" "$signal"
  "$DTRAIN" submit "$name.yaml" >"$name.out" 2>&1 &
  submit_pid=$!
  local deadline=$((SECONDS + 300))
  while [[ -z $began ]] && ((SECONDS < deadline)) && kill -0 "$submit_pid" 2>/dev/null; do
    if [[ $PROGRAM == probe ]]; then
      log=$(ls runs/"$name"-*/rank-00001.log 2>/dev/null | head -1 || true)
      line=$(grep -h " runtime_probe: rank 1 .* at step 100$" "${log:-/dev/null}" 2>/dev/null || true)
      if [[ -n $line ]]; then
        began=$(line_time "${line%% *}")
        pid=$(sed -nE '1s/.*, pid ([0-9]+)\).*/\1/p' "$log")
      fi
    else
      log=$(ls runs/"$name"-*/rank-00001.log 2>/dev/null | head -1 || true)
      if [[ -n $log ]] && grep -q " step 50 loss" runs/"$name"-*/rank-00000.log 2>/dev/null; then
        pid=$(sed -n '1s/.*(local rank 1 of 2, pid \([0-9]*\)).*/\1/p' "$log")
        kill "-$signal" "$pid"
        began=$(now)
      fi
    fi
    [[ -n $began ]] || sleep 0.2
  done
  [[ -n $began ]] || { kill "$submit_pid" 2>/dev/null; wait "$submit_pid" || true; echo "- - 0"; return; }
  while kill -0 "$submit_pid" 2>/dev/null; do
    [[ -z $named ]] && grep -qE "^dtrain: hang: rank " "$name.out" && named=$(now)
    if ! within "$(seconds "$began" "$(now)")" 120; then
      kill -CONT "$pid" 2>/dev/null || true
      kill "$submit_pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  wait "$submit_pid" || true
  local ended
  ended=$(now)
  grep -E "^dtrain: hang: " "$name.out" | grep -v "^dtrain: hang: the stacks of " >"$name.verdicts" || true
  [[ -n $named ]] || { [[ -s $name.verdicts ]] && named=$ended; }
  local wrong
  wrong=$(grep -cvE "^dtrain: hang: rank 1 \\(on $host\\) is $state_re" "$name.verdicts" || true)
  if grep -qE "^dtrain: hang: rank 1 \\(on $host\\) is $state_re" "$name.verdicts"; then
    echo "$(seconds "$began" "$named") $(seconds "$began" "$ended") $wrong"
  else
    echo "- $(seconds "$began" "$ended") $wrong"
  fi
}

failures=0
for case in "stop STOP stopped \\(SIGSTOP\\)" "spin SPIN running, [0-9]+ % CPU"; do
  read -r name signal state_re <<<"$case"
  [[ " ${CASES[*]} " == *" $name "* ]] || continue
  [[ $PROGRAM == torch && $signal == SPIN ]] && signal=USR2
  named_ok=0 ended_ok=0 wrong=0 nameds=() endeds=()
  for ((run = 1; run <= RUNS; ++run)); do
    read -r named ended bad < <(one_run "$name" "$signal" "$state_re")
    echo "$PROGRAM $name run $run: named after $named s, ended after $ended s, wrong names $bad"
    [[ $named != - ]] && within "$named" 45 && named_ok=$((named_ok + 1))
    [[ $ended != - ]] && within "$ended" 60 && ended_ok=$((ended_ok + 1))
    wrong=$((wrong + bad))
    [[ $named != - ]] && nameds+=("$named")
    endeds+=("$ended")
    if [[ $named == - ]] || ! within "$named" 45 || ! within "$ended" 60 || ((bad > 0)); then
      echo "  its output: $(cat "$name.out")"
      # Its run directory (the rank logs, live/, the stacks) kept for a look, where asked.
      if [[ -n ${DTRAIN_HANG_KEEP:-} ]]; then
        mkdir -p "$DTRAIN_HANG_KEEP" && cp -a runs/"$name"-* "$DTRAIN_HANG_KEEP/" &&
          echo "  its run directory: kept in $DTRAIN_HANG_KEEP"
      fi
    fi
  done
  # range TIMES...: "min-max, median M" of the times given ("-": none).
range() {
  printf '%s\n' "$@" | grep -v '^-$' | sort -g |
    awk '{ t[NR] = $1 } END { m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%s-%s, median %.1f", t[1], t[NR], m }'
}
  echo "tally: $PROGRAM, rank 1 $([[ $name == stop ]] && echo "stopped (SIGSTOP)" || echo "spinning"): named within 45 s in $named_ok of $RUNS (${nameds[*]:+$(range "${nameds[@]}") s}), the job ended within 60 s in $ended_ok of $RUNS ($(range "${endeds[@]}") s), wrong names $wrong; load $(cut -d' ' -f1-3 /proc/loadavg)"
  ((named_ok == RUNS && ended_ok == RUNS && wrong == 0)) || failures=$((failures + 1))
done
((failures == 0)) || fail "$failures of ${#CASES[@]} cases missed (tallies above)"
echo PASS
