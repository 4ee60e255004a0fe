#!/usr/bin/env bash
# Times the whole `dtrain topo --topology FILE --json` command (process start, hwloc XML load,
# solve, JSON) N times and reports min/median/max wall time against the 100 ms budget of issue 3.
# Prints numbers only; never fails on a slow machine.
#   topo_bench.sh DTRAIN FILE [N]
set -euo pipefail
dtrain=$1 file=$2 n=${3:-30}
"$dtrain" topo --topology "$file" --json >/dev/null  # warm the page cache; errors stop here
times=()
for ((i = 0; i < n; i++)); do
  start=$(date +%s%N)
  "$dtrain" topo --topology "$file" --json >/dev/null
  end=$(date +%s%N)
  times+=($(((end - start) / 1000)))
done
mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
us_to_ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
echo "# topo_bench: dtrain topo --topology $(basename "$file") --json, $n runs, $(nproc) CPUs"
echo "# budget 100 ms; wall time per run in ms"
printf '%-8s %-8s %-8s %s\n' "# min" "median" "max" "median/budget"
median=${sorted[$((n / 2))]}
printf '%-8s %-8s %-8s %d%%\n' "$(us_to_ms "${sorted[0]}")" "$(us_to_ms "$median")" \
  "$(us_to_ms "${sorted[$((n - 1))]}")" $((median / 1000))
