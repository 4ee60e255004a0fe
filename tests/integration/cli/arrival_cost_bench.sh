#!/usr/bin/env bash
# What recording each collective's wait costs (issue 46 item 3: at most 1 % of step time): the same
# job (runtime_probe's loop, 2 ranks on the local site, steps of a 1 ms sleep and a 4 KiB
# allreduce) with the live page and its watches (the default) and without (DTRAIN_HANG_AFTER=off:
# no page, no recording, no watch), alternated 5 times in this one run; the ratio of the median
# loop times is printed, and must be at most 1.01. Steps of no sleep (the collective alone, the
# worst case) are measured and printed too, not judged.
#   arrival_cost_bench.sh DTRAIN PROBE
set -euo pipefail
DTRAIN=$1 PROBE=$2
source "$(dirname "$0")/lib.sh"
enter_workdir arrival-cost

loop_seconds() { # NAME STEP_MS STEPS HANG_AFTER: the loop's seconds on rank 0
  {
    echo "name: $1"
    echo "ranks_per_node: 2"
    echo "command: [$(printf '%q' "$PROBE")]"
    echo "env:"
    echo "  RUNTIME_PROBE_STEPS: \"$3\""
    echo "  RUNTIME_PROBE_STEP_MS: \"$2\""
    [[ "$4" == default ]] || echo "  DTRAIN_HANG_AFTER: \"$4\""
  } >"$1.yaml"
  submit_expecting 0 "$1.yaml" "the $1 job" >&2
  sed -nE 's/^runtime_probe: [0-9]+ steps in ([0-9.]+) s$/\1/p' "$1.out" | tail -1
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for case in "1 3000" "0 20000"; do
  read -r ms steps <<<"$case"
  on=() off=()
  for ((i = 1; i <= 5; ++i)); do
    off+=("$(loop_seconds "off$i-$ms" "$ms" "$steps" off)")
    on+=("$(loop_seconds "on$i-$ms" "$ms" "$steps" default)")
  done
  off_median=$(printf '%s\n' "${off[@]}" | median)
  on_median=$(printf '%s\n' "${on[@]}" | median)
  ratio=$(awk -v a="$on_median" -v b="$off_median" 'BEGIN { printf "%.4f", a / b }')
  echo "steps of $ms ms + a 4 KiB allreduce, $steps steps: recorded ${on[*]} s, not ${off[*]} s; median ratio $ratio"
  if [[ "$ms" == 1 ]]; then
    awk -v r="$ratio" 'BEGIN { exit !(r <= 1.01) }' ||
      fail "recording the waits costs more than 1 % of step time: ratio $ratio"
  fi
done
