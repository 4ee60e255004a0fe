#!/usr/bin/env bash
# A 2 x 2 job through `dtrain submit --wait` (site slurm, the SPANK plugin's loggers, Open MPI's
# PMIx bootstrap, DTRAIN_TRANSPORT=mpi) in which rank 3, on node2, SIGKILLs itself in a loop of
# 1 MiB allreduces that exits at the first error (RUNTIME_PROBE_FAIL_FAST), RUNS times: every
# survivor's log must name rank 3 on node2 in every run (issue 33 item 5). Open MPI's abort has
# Slurm end the whole step within milliseconds, before the alarm of rank 2 reaches rank 1 on the
# other node in about 1 run of 10; the job script (`dtrain note-lost-rank`, the step that outlives
# the launch and runs before `dtrain submit --wait` sees the job end) then appends the line rank 2
# wrote to rank 1's log, saying so (docs/errors.md). Prints how many runs had every survivor name it by itself and
# how many with such a line; `dtrain logs --first-error` must name rank 3 first in every run.
# LOAD busy processes run beside the jobs, and the load average is printed. Without the arguments,
# DTRAIN_LOST_RANK_RUNS (default 50) and DTRAIN_LOST_RANK_LOAD (default 0) say them.
#   lost_rank_runs.sh CLUSTER_DIR PROBE DTRAIN [RUNS [LOAD]]
set -euo pipefail
source "$1/env.sh"
source "$(dirname "$0")/lib.sh"
probe=$2 DTRAIN=$3 runs=${4:-${DTRAIN_LOST_RANK_RUNS:-50}} load=${5:-${DTRAIN_LOST_RANK_LOAD:-0}}
[[ $runs =~ ^[1-9][0-9]{0,3}$ ]] || fail "runs (DTRAIN_LOST_RANK_RUNS): expected 1 to 9999, got [$runs]"
[[ $load =~ ^[0-9]{1,2}$ ]] || fail "load (DTRAIN_LOST_RANK_LOAD): expected 0 to 99, got [$load]"
work=$(scratch_dir)
busy=()
cleanup() {
  ((${#busy[@]} == 0)) || kill "${busy[@]}" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for ((i = 0; i < load; i++)); do
  (while :; do :; done) &
  busy+=($!)
done

cat >"$work/job.yaml" <<YAML
name: lost
site: slurm
nodes: 2
ranks_per_node: 2
walltime: "00:05:00"
partition: debug
affinity: {gpu: none, cpu: none}
env: {DTRAIN_TIMEOUT: "5", DTRAIN_TRANSPORT: mpi, RUNTIME_PROBE_DIE_RANK: "3", RUNTIME_PROBE_FAIL_FAST: "1"}
command: [$probe]
YAML
named=0 noted=0
lost='peer process lost: rank 3 \(on node2\) was killed or exited without finalizing'
for ((i = 1; i <= runs; i++)); do
  out=$(cd "$work" && timeout 120 "$DTRAIN" submit job.yaml --wait 2>&1) &&
    fail "run $i: the job succeeded with rank 3 killed: $out"
  run=$(sed -n 's/^dtrain: submitted job .* run directory \(.*\)$/\1/p' <<<"$out")
  [[ -d $run ]] || fail "run $i: no run directory in: $out"
  silent="" by_note=""
  for r in 0 1 2; do
    log="$run/rank-0000$r.log"
    if ! grep -qE "$lost" "$log"; then
      silent+=" $r"
    elif grep -qE "dtrain: rank $r ended before it heard what rank [0-9] reported: $lost" "$log"; then
      expect_match "$(grep -E "ended before it heard" "$log")" \
        "; written after the launch ended, by the job script$" "run $i: rank $r's note"
      by_note+=" $r"
    fi
  done
  [[ -z $silent ]] ||
    fail "run $i: ranks$silent did not name rank 3 on node2: $(tail -n 3 "$run"/rank-0000[0-3].log)"
  if [[ -z $by_note ]]; then
    named=$((named + 1))
  else
    noted=$((noted + 1))
    echo "run $i: ranks$by_note were ended before they heard; the job script wrote it for them"
  fi
  first=$("$DTRAIN" logs --first-error "$run" 2>&1 || true)
  expect_match "$first" "^first failure: rank 3 on node2 " "run $i: dtrain logs --first-error"
done
echo "every survivor named rank 3 on node2 in $((named + noted)) of $runs runs" \
  "($named by themselves, $noted with the job script's line for the ranks ended first;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), $load busy processes beside)"
