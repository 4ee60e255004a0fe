#!/usr/bin/env bash
# Measures the example's 1-rank vs 2-rank throughput on this machine: REPEATS alternating pairs of
# full runs (same spec, same global batch), then `dtrain stats` over all of them prints the
# scaling table (each run against the smallest). Alternating pairs spread a busy neighbour's load
# over both sizes. Usage, from the repository root after building into build/:
#   examples/fashion-mnist/scaling.sh [REPEATS] [extra --set arguments for dtrain submit...]
set -euo pipefail
repeats=${1:-3}
shift || true
dtrain=${DTRAIN:-build/bin/dtrain}
out=$(mktemp -d "${TMPDIR:-/tmp}/fmnist-scaling.XXXXXX")
runs=()
for ((i = 1; i <= repeats; i++)); do
  for ranks in 1 2; do
    "$dtrain" submit examples/fashion-mnist/job.yaml --set ranks_per_node=$ranks \
      --set "run_dir=$out/r$ranks-$i" "$@" > "$out/r$ranks-$i.txt" 2>&1
    grep '^final test accuracy' "$out/r$ranks-$i.txt"
    runs+=("$out/r$ranks-$i")
  done
done
echo "# load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
"$dtrain" stats "${runs[@]}" | sed -n '/^# scaling/,$p'
