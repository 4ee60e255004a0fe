#!/usr/bin/env bash
# Measures the example's 1-rank vs 2-rank throughput on this machine: REPEATS alternating pairs of
# full runs (same spec, same global batch), then `dtrain stats` over all of them prints the
# scaling table (each run against the smallest), and each pair's ratio with their median.
# Alternating pairs spread a busy neighbour's load, or the machine's slower spells, over both
# sizes; the median of the pairs is the figure to quote. Usage, from the repository root after
# building into build/:
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
total() { "$dtrain" stats "$1" | awk '$1 == "total" { print $4 }'; }
ratios=()
for ((i = 1; i <= repeats; i++)); do
  one=$(total "$out/r1-$i")
  two=$(total "$out/r2-$i")
  ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", b / a }')
  ratios+=("$ratio")
  echo "pair $i: 1 rank $one, 2 ranks $two samples/s: $ratio x"
done
printf '%s\n' "${ratios[@]}" | sort -n |
  awk '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
                          printf "median of %d pairs: %.2f x (lowest %.2f, highest %.2f)\n", NR, m, r[1], r[NR] }'
echo "# runs in $out"
