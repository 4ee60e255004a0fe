#!/usr/bin/env bash
# The hang watch's benchmark of runs across nodes (issue 46, "Done when": 20 runs each, 0 wrong
# names), on the namespace cluster, each rank under `dtrain run-rank` as the generated Slurm
# scripts start it, with the defaults (DTRAIN_HANG_AFTER 30 s, DTRAIN_ON_HANG abort):
#  - stop: 2 nodes x 2 ranks of runtime_probe's training loop; rank 3 (node2) SIGSTOPs itself
#    before step 100's allreduce (its log line's time is the stop). Rank 3 must be named from
#    node2, "stopped (SIGSTOP)", within 45 s, the job ended within 60 s, nobody else named.
#  - spin: the same, rank 3 spinning in a busy loop outside any collective instead: named from
#    node2, "running, N % CPU".
#  - cut: 3 nodes x 2 ranks; node2's link cut mid-run. node2 must be named as the node (ranks
#    2-3) within 45 s by the other side's lowest rank, saying it is not at fault (node2's loggers,
#    ending its ranks, say it too when they read the records in time); the job ended within 60 s
#    of the cut (the link comes back once the other side has spoken, so that node2's slurmd can
#    report its ranks' end to srun); no other node or rank named.
# PROGRAM torch: the same cases for an unmodified torch DDP program on backend="dtrain"
# (examples/pytorch-ddp under tests/integration/python/spin_on_usr2.py, which answers SIGUSR2 with
# a busy loop in Python); once rank 0 logged step 50 (every rank trains), rank 3's Python process is
# sent SIGSTOP or SIGUSR2 (the hang begins then), or node2's link is cut.
# Each case RUNS times; the tally of each is printed, and any miss fails the test after all runs.
#   hang_watch_runs.sh CLUSTER_DIR DTRAIN PROBE [RUNS [PROGRAM SRC BUILD]]   (RUNS: else
#   DTRAIN_HANG_RUNS, else 20; PROGRAM: probe (the default) or torch; DTRAIN_HANG_CASES: the
#   cases, else "stop spin cut")
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
DTRAIN=$2 PROBE=$3 RUNS=${4:-${DTRAIN_HANG_RUNS:-20}} PROGRAM=${5:-probe} SRC=${6:-} BUILD=${7:-}
[[ $PROGRAM =~ ^(probe|torch)$ ]] || fail "PROGRAM: expected probe or torch, got \"$PROGRAM\""
if [[ $PROGRAM == torch ]]; then
  [[ -f $SRC/examples/pytorch-ddp/train.py && -d $BUILD/python/dtrain ]] ||
    fail "PROGRAM torch: expected the source tree and the build tree (with python/dtrain), got \"$SRC\" and \"$BUILD\""
  [[ -d /usr/share/datasets/fashion-mnist ]] ||
    fail "Debian's dataset-fashion-mnist is not installed (scripts/install-deps installs it)"
fi
read -ra CASES <<<"${DTRAIN_HANG_CASES:-stop spin cut}"
for case in "${CASES[@]}"; do
  [[ $case =~ ^(stop|spin|cut)$ ]] || fail "DTRAIN_HANG_CASES: expected stop, spin or cut, got \"$case\""
done
work=$(scratch_dir)
link="${VETH_PREFIX:-dtrv}2"
trap 'link_back 2 || true; rm -rf "$work"' EXIT

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
within() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
# The program of every rank: runtime_probe, or the DDP example on backend "dtrain".
program() {
  if [[ $PROGRAM == probe ]]; then
    echo "$PROBE"
  else
    printf '%s\n' /usr/bin/python3 "$SRC/tests/integration/python/spin_on_usr2.py" \
      "$SRC/examples/pytorch-ddp/train.py" --epochs 20 --log-every 10 --no-checkpoint --backend dtrain \
      --global-batch 120 # a multiple of 4 and 6 ranks
  fi
}
# trained DIR: whether rank 0 of the run in DIR has trained a while (every rank trains then).
trained() {
  if [[ $PROGRAM == probe ]]; then
    grep -q " runtime_probe: step 100$" "$1"/rank-00000.log 2>/dev/null
  else
    grep -q " step 50 loss " "$1"/rank-00000.log 2>/dev/null
  fi
}
# A rank's pid from its log's start line ("(local rank 1 of 2, pid 4242)").
rank_pid() { sed -nE '1s/.*, pid ([0-9]+)\).*/\1/p' "$1" 2>/dev/null; }

# range TIMES...: "min-max, median M" of the times given ("-": none).
range() {
  printf '%s\n' "$@" | grep -v '^-$' | sort -g |
    awk '{ t[NR] = $1 } END { m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%s-%s, median %.1f", t[1], t[NR], m }'
}

# ranks DIR LIMIT NODES: the job step of every rank of `program` under run-rank, on NODES (2 ranks
# each), its output in DIR.out, in the background (its pid in `job`); at most LIMIT seconds.
ranks() {
  local dir=$1 limit=$2 nodes=$3 cmd
  mapfile -t cmd < <(program)
  [[ $PROGRAM == probe ]] || limit=$((limit + 90)) # torch's import and 50 steps first
  (export PYTHONPATH=$BUILD/python PYTHONUNBUFFERED=1
    timeout -k 5 "$limit" srun --mpi=pmix -w "$nodes" -N"$(tr , '\n' <<<"$nodes" | wc -l)" \
      --ntasks-per-node=2 "$DTRAIN" run-rank --run-dir "$dir" -- "${cmd[@]}" >"$dir.out" 2>&1 || true) &
  job=$!
}

# rank_run DIR SIGNAL: "named ended wrong" for one run of rank 3 stopped (STOP) or spinning (SPIN).
# runtime_probe's rank 3 stops or spins itself before step 100 (its log line's time is the hang's
# start); the torch program's is sent SIGSTOP or SIGUSR2 once rank 0 logged step 50.
rank_run() {
  local dir=$1 signal=$2 began="" named="" line job pid=""
  rm -rf "$dir"
  RUNTIME_PROBE_STEPS=100000 RUNTIME_PROBE_STEP_MS=20 RUNTIME_PROBE_DIE_RANK=3 \
    RUNTIME_PROBE_DIE_STEP=100 RUNTIME_PROBE_SIGNAL=$signal ranks "$dir" 150 node1,node2
  local said="stops" right="^dtrain: hang: rank 3 \\(on node2\\) is stopped \\(SIGSTOP\\), "
  if [[ $signal == SPIN ]]; then
    said="spins" right="^dtrain: hang: rank 3 \\(on node2\\) is running, [0-9]+ % CPU, outside any collective "
    # Python runs the busy loop between two bytecodes; DDP's allreduces may still be in flight.
    [[ $PROGRAM == probe ]] || right="^dtrain: hang: rank 3 \\(on node2\\) is running, [0-9]+ % CPU"
  fi
  while kill -0 "$job" 2>/dev/null; do
    if [[ -z $began && $PROGRAM == probe ]]; then
      line=$(grep -h " runtime_probe: rank 3 $said at step 100$" "$dir"/rank-00003.log 2>/dev/null || true)
      [[ -n $line ]] && began=$(date -d "${line%% *}" +%s.%N)
    elif [[ -z $began ]] && trained "$dir"; then
      pid=$(rank_pid "$dir"/rank-00003.log)
      [[ -n $pid ]] && kill "-$([[ $signal == SPIN ]] && echo USR2 || echo STOP)" "$pid" && began=$(now)
    fi
    # A watch that never ends the rank: continued, for the job's timeout to end it.
    [[ -n $pid && -n $began ]] && ! within "$(seconds "$began" "$(now)")" 120 && kill -CONT "$pid" 2>/dev/null
    [[ -n $began && -z $named ]] && grep -q "^dtrain: hang: " "$dir.out" && named=$(now)
    sleep 0.2
  done
  wait "$job" || true
  local ended
  ended=$(now)
  [[ -n $began ]] || { echo "- - 0"; return; }
  grep -E "^dtrain: hang: " "$dir.out" | grep -v "^dtrain: hang: the stacks of " >"$dir.verdicts" || true
  local wrong
  wrong=$(grep -cvE "$right" "$dir.verdicts" || true)
  if grep -qE "$right" "$dir.verdicts"; then
    echo "$(seconds "$began" "${named:-$ended}") $(seconds "$began" "$ended") $wrong"
  else
    echo "- $(seconds "$began" "$ended") $wrong"
  fi
}

# cut_run DIR: "named ended wrong" for one run of node2's link cut.
cut_run() {
  local dir=$1 began named="" job
  rm -rf "$dir"
  RUNTIME_PROBE_STEPS=100000 RUNTIME_PROBE_STEP_MS=20 ranks "$dir" 150 node1,node2,node3
  for _ in $(seq 750); do # until the job trains (rank 0 logged step 100, or torch's step 50)
    trained "$dir" && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.2
  done
  ip link set "$link" down
  began=$(now)
  local other="not at fault: the ranks on this side of the cut would not learn of node2's end$"
  while kill -0 "$job" 2>/dev/null; do
    if [[ -z $named ]] && grep -q "$other" "$dir/hang.log" 2>/dev/null; then
      named=$(now)
      ip link set "$link" up
    fi
    if ! within "$(seconds "$began" "$(now)")" 90; then ip link set "$link" up; fi
    sleep 0.2
  done
  wait "$job" || true
  local ended
  ended=$(now)
  # The next run (and the next test) need node2 idle in Slurm again.
  link_back 2
  sed 's/^[^ ]* //' "$dir/hang.log" 2>/dev/null | grep "^dtrain: hang: " >"$dir.verdicts" || true
  # What node2's own record says when the verdict's logger read it (the other side may decide
  # before it is in, or after node2's loggers, ending their ranks, removed it).
  local own="it reaches none of them: its link is cut|it wrote no answer of its own: its link is cut, or it is down"
  local node2="^dtrain: hang: node node2 \\(ranks 2-3\\) stopped answering: nodes node1, node3 cannot reach it and reach each other \\(($own)\\); ranks 0-5 wait in [a-z_]+ #[0-9]+( \\(some already in #[0-9]+\\))?( of [0-9]+ bytes)? for [0-9]+ s; DTRAIN_ON_HANG=abort: ending ranks 2-3 on node2"
  local wrong
  wrong=$(grep -cvE "$node2" "$dir.verdicts" || true)
  # The other side's line (node2's own is there when its loggers read the records in time).
  if grep -qE "$node2 \\(their loggers there\\) and rank 0 on node1, $other" "$dir.verdicts"; then
    echo "$(seconds "$began" "${named:-$ended}") $(seconds "$began" "$ended") $wrong"
  else
    echo "- $(seconds "$began" "$ended") $wrong"
  fi
}

failures=0
for case in "${CASES[@]}"; do
  named_ok=0 ended_ok=0 wrong=0 nameds=() endeds=()
  for ((run = 1; run <= RUNS; ++run)); do
    case $case in
      stop) read -r named ended bad < <(rank_run "$work/$case-$run" STOP) ;;
      spin) read -r named ended bad < <(rank_run "$work/$case-$run" SPIN) ;;
      cut) read -r named ended bad < <(cut_run "$work/$case-$run") ;;
    esac
    echo "multinode $PROGRAM $case run $run: named after $named s, ended after $ended s, wrong names $bad"
    [[ $named != - ]] && within "$named" 45 && named_ok=$((named_ok + 1))
    [[ $ended != - ]] && within "$ended" 60 && ended_ok=$((ended_ok + 1))
    wrong=$((wrong + bad))
    [[ $named != - ]] && nameds+=("$named")
    endeds+=("$ended")
    if [[ $named == - ]] || ! within "$named" 45 || ! within "$ended" 60 || ((bad > 0)); then
      echo "  its verdicts: $(cat "$work/$case-$run.verdicts" 2>/dev/null)"
      echo "  its output: $(tail -c 3000 "$work/$case-$run.out")"
    fi
  done
  case $case in
    stop) what="rank 3 on node2 stopped (SIGSTOP)" ;;
    spin) what="rank 3 on node2 spinning outside collectives" ;;
    cut) what="node2's link cut" ;;
  esac
  echo "tally: multinode $PROGRAM, $what: named within 45 s in $named_ok of $RUNS (${nameds[*]:+$(range "${nameds[@]}") s}), the job ended within 60 s in $ended_ok of $RUNS ($(range "${endeds[@]}") s), wrong names $wrong; load $(cut -d' ' -f1-3 /proc/loadavg)"
  ((named_ok == RUNS && ended_ok == RUNS && wrong == 0)) || failures=$((failures + 1))
done
((failures == 0)) || fail "$failures of ${#CASES[@]} cases missed (tallies above)"
echo PASS
